/* json.c — RFC 8259 JSON reader (a DOM of ns_json nodes) and writing helpers.
 *
 * One pass over the text by recursive descent (nesting is capped at 512, so
 * the C stack stays small).  Finished children of the containers being read
 * wait on a shared scratch stack that grows geometrically; when a container
 * closes, its children move into one exactly-sized block.  Numbers take a
 * fast exact path (integers, and Clinger's fast path for short decimals) and
 * fall back to strtod for the rest.  Columns count bytes from 1. */
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512

typedef struct parser {
    const char *p, *end;
    const char *line_start;
    int line;
    int depth;
    const char *path;
    ns_error *err;
    ns_json *vals; /* finished children of open containers */
    size_t nvals, vals_cap;
    char **keys;   /* keys of open objects */
    size_t nkeys, keys_cap;
} parser;

static int col_of(const parser *ps, const char *at)
{
    ptrdiff_t c = at - ps->line_start + 1;
    return c > INT_MAX ? INT_MAX : (int)c;
}

static ns_status fail_at(parser *ps, const char *at, const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg ? arg : "");
    return ns_error_set(ps->err, NS_ERR_INPUT, ps->path, ps->line, col_of(ps, at), "%s", msg);
}

static ns_status fail(parser *ps, const char *at, const char *msg)
{
    return fail_at(ps, at, "%s", msg);
}

/* A readable rendering of the character at p (or "end of input"). */
static const char *describe(const parser *ps, const char *p, char *buf, size_t n)
{
    if (p >= ps->end) return "end of input";
    unsigned char c = (unsigned char)*p;
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(parser *ps)
{
    const char *p = ps->p, *end = ps->end;
    while (p < end) {
        char c = *p;
        if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '\n') {
            p++;
            ps->line++;
            ps->line_start = p;
        } else {
            break;
        }
    }
    ps->p = p;
}

/* Length (2–4) of the well-formed UTF-8 sequence at s, or 0 (overlong forms,
 * surrogates and code points above U+10FFFF are ill-formed). */
static int utf8_seq(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0];
    ptrdiff_t avail = end - s;
    unsigned lo = 0x80, hi = 0xbf;
    int n;
    if (c < 0xc2) return 0;
    if (c < 0xe0) {
        n = 2;
    } else if (c < 0xf0) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c < 0xf5) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at p (p + 4 <= end checked by the caller); -1 if bad. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static char *put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Reads the string literal at ps->p (a '"') into a new NUL-terminated buffer.
 * First pass: find the closing quote, rejecting control characters and
 * ill-formed UTF-8; second pass (only when there are escapes): decode. */
static ns_status parse_string(parser *ps, char **out, size_t *out_len)
{
    const char *open = ps->p, *end = ps->end;
    const char *s = open + 1;
    bool has_esc = false;
    for (;;) {
        if (s >= end) return fail(ps, open, "unterminated string");
        unsigned char c = (unsigned char)*s;
        if (c == '"') break;
        if (c == '\\') {
            has_esc = true;
            if (end - s < 2) return fail(ps, open, "unterminated string");
            s += 2;
        } else if (c < 0x20) {
            char m[64];
            snprintf(m, sizeof m, "control character U+%04X in string (must be escaped)", c);
            return fail(ps, s, m);
        } else if (c < 0x80) {
            s++;
        } else {
            int n = utf8_seq((const unsigned char *)s, (const unsigned char *)end);
            if (!n) return fail(ps, s, "invalid UTF-8 in string");
            s += n;
        }
    }
    size_t raw = (size_t)(s - open - 1);
    char *buf = ns_xmalloc(raw + 1);
    size_t len;
    if (!has_esc) {
        memcpy(buf, open + 1, raw);
        len = raw;
    } else {
        char *o = buf;
        const char *q = open + 1;
        while (q < s) {
            if (*q != '\\') {
                *o++ = *q++;
                continue;
            }
            const char *esc = q;
            char e = q[1];
            q += 2;
            switch (e) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '/': *o++ = '/'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u': {
                long cp = s - q >= 4 ? hex4(q) : -1;
                if (cp < 0) {
                    free(buf);
                    return fail(ps, esc, "invalid \\u escape (expected 4 hex digits)");
                }
                q += 4;
                if (cp >= 0xdc00 && cp <= 0xdfff) {
                    free(buf);
                    return fail(ps, esc, "invalid \\u escape: unpaired low surrogate");
                }
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    long lo = (s - q >= 6 && q[0] == '\\' && q[1] == 'u') ? hex4(q + 2) : -1;
                    if (lo < 0xdc00 || lo > 0xdfff) {
                        free(buf);
                        return fail(ps, esc, "invalid \\u escape: unpaired high surrogate");
                    }
                    q += 6;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                o = put_utf8(o, (unsigned long)cp);
                break;
            }
            default: {
                char d[32], m[64];
                snprintf(m, sizeof m, "invalid escape '\\' followed by %s", describe(ps, esc + 1, d, sizeof d));
                free(buf);
                return fail(ps, esc, m);
            }
            }
        }
        len = (size_t)(o - buf);
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    ps->p = s + 1;
    return NS_OK;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Exact powers of ten representable in a double. */
static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#ifdef __SIZEOF_INT128__
/* Exact decimal-to-double for mant < 2^64 and |exp10| <= 27 with 128-bit
 * integers: mant * 5^e (< 2^128), or (mant << 64+lz) / 5^k with the
 * remainder as a sticky bit, rounded once to 53 bits (ties to even) and
 * scaled by a power of two.  Results are normal doubles in this range. */
__extension__ typedef unsigned __int128 u128;

static const uint64_t pow5[28] = {
    1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625, 48828125,
    244140625, 1220703125, 6103515625u, 30517578125u, 152587890625u, 762939453125u,
    3814697265625u, 19073486328125u, 95367431640625u, 476837158203125u,
    2384185791015625u, 11920928955078125u, 59604644775390625u, 298023223876953125u,
    1490116119384765625u, 7450580596923828125u,
};

static double round_u128(u128 x, bool sticky, int exp2)
{
    uint64_t hi = (uint64_t)(x >> 64);
    int bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)x);
    if (bits <= 53) return ldexp((double)(uint64_t)x, exp2); /* exact (never sticky here) */
    int shift = bits - 53;
    uint64_t m = (uint64_t)(x >> shift);
    u128 rem = x & (((u128)1 << shift) - 1), half = (u128)1 << (shift - 1);
    if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
    return ldexp((double)m, exp2 + shift);
}

static double decimal_u128(uint64_t mant, int exp10)
{
    if (exp10 >= 0) return round_u128((u128)mant * pow5[exp10], false, exp10);
    int lz = __builtin_clzll(mant);
    u128 num = (u128)(mant << lz) << 64;
    uint64_t d = pow5[-exp10];
    return round_u128(num / d, num % d != 0, -(64 + lz - exp10));
}
#endif

static ns_status parse_number(parser *ps, ns_json *v)
{
    const char *start = ps->p, *q = start, *end = ps->end;
    bool neg = false;
    if (*q == '-') {
        neg = true;
        q++;
    }
    if (q >= end || !is_digit(*q)) return fail(ps, start, "invalid number: expected a digit");
    uint64_t mant = 0;
    int ndig = 0;        /* significant digits taken into mant */
    bool inexact = false; /* digits dropped: mant is not the whole value */
    long exp10 = 0;
    bool integral = true;
    if (*q == '0') {
        q++;
        if (q < end && is_digit(*q)) return fail(ps, start, "invalid number: leading zeros are not allowed");
    } else {
        for (; q < end && is_digit(*q); q++) {
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(*q - '0');
                ndig++;
            } else {
                inexact = true;
                exp10++;
            }
        }
    }
    if (q < end && *q == '.') {
        integral = false;
        q++;
        if (q >= end || !is_digit(*q)) return fail(ps, q, "invalid number: expected a digit after '.'");
        for (; q < end && is_digit(*q); q++) {
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(*q - '0');
                if (mant) ndig++;
                exp10--;
            } else {
                inexact = true;
            }
        }
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        integral = false;
        q++;
        bool eneg = false;
        if (q < end && (*q == '+' || *q == '-')) eneg = *q++ == '-';
        if (q >= end || !is_digit(*q)) return fail(ps, q, "invalid number: expected a digit in the exponent");
        long e = 0;
        for (; q < end && is_digit(*q); q++)
            if (e < 100000) e = e * 10 + (*q - '0');
        exp10 += eneg ? -e : e;
    }
    ps->p = q;
    v->kind = NS_JSON_NUMBER;
    if (integral && !inexact) {
        if (neg ? mant <= (uint64_t)INT64_MAX + 1 : mant <= (uint64_t)INT64_MAX) {
            v->is_integer = true;
            v->integer = neg ? (mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mant) : (int64_t)mant;
        }
        v->number = neg ? -(double)mant : (double)mant;
        return NS_OK;
    }
#if FLT_EVAL_METHOD == 0
    /* Clinger's fast path: both operands exact, so one rounding. */
    if (!inexact && mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)mant;
        d = exp10 >= 0 ? d * pow10_exact[exp10] : d / pow10_exact[-exp10];
        v->number = neg ? -d : d;
        return NS_OK;
    }
#endif
#ifdef __SIZEOF_INT128__
    if (!inexact && mant && exp10 >= -27 && exp10 <= 27) {
        double d = decimal_u128(mant, (int)exp10);
        v->number = neg ? -d : d;
        return NS_OK;
    }
#endif
    if (!inexact && !mant) {
        v->number = neg ? -0.0 : 0.0;
        return NS_OK;
    }
    size_t n = (size_t)(q - start);
    char small[64];
    char *tok = n < sizeof small ? small : ns_xmalloc(n + 1);
    memcpy(tok, start, n);
    tok[n] = '\0';
    v->number = strtod(tok, NULL); /* out of range: ±HUGE_VAL or 0 */
    if (tok != small) free(tok);
    return NS_OK;
}

static ns_status parse_value(parser *ps, ns_json *v);

static void push_val(parser *ps, const ns_json *v)
{
    NS_GROW(ps->vals, ps->vals_cap, ps->nvals + 1);
    ps->vals[ps->nvals++] = *v;
}

/* Moves the children above base into a block of their own. */
static ns_json *take_vals(parser *ps, size_t base)
{
    size_t n = ps->nvals - base;
    if (!n) return NULL;
    if (base == 0 && n >= 4096) {
        /* The scratch holds exactly this container's children (a large
         * top-level array, typically): hand it over instead of copying. */
        ns_json *items = ns_xrealloc(ps->vals, n * sizeof *items);
        ps->vals = NULL;
        ps->nvals = ps->vals_cap = 0;
        return items;
    }
    ns_json *items = ns_xmalloc(n * sizeof *items);
    memcpy(items, ps->vals + base, n * sizeof *items);
    ps->nvals = base;
    return items;
}

static ns_status parse_array(parser *ps, ns_json *v)
{
    v->kind = NS_JSON_ARRAY;
    if (++ps->depth > MAX_DEPTH) return fail(ps, ps->p, "arrays and objects nested deeper than 512");
    ps->p++;
    size_t base = ps->nvals;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
    } else {
        for (;;) {
            ns_json item;
            skip_ws(ps);
            ns_status st = parse_value(ps, &item);
            if (st) return st;
            push_val(ps, &item);
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == ']') {
                ps->p++;
                break;
            }
            char d[32];
            return fail_at(ps, ps->p, "expected ',' or ']' after an array element, found %s",
                           describe(ps, ps->p, d, sizeof d));
        }
    }
    size_t n = ps->nvals - base;
    if (n > INT_MAX) return fail(ps, ps->p, "array too long");
    v->n = (int)n;
    v->items = take_vals(ps, base);
    ps->depth--;
    return NS_OK;
}

static ns_status parse_object(parser *ps, ns_json *v)
{
    v->kind = NS_JSON_OBJECT;
    if (++ps->depth > MAX_DEPTH) return fail(ps, ps->p, "arrays and objects nested deeper than 512");
    ps->p++;
    size_t base = ps->nvals, kbase = ps->nkeys;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
    } else {
        for (;;) {
            char d[32];
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"')
                return fail_at(ps, ps->p, "expected a string key in object, found %s",
                               describe(ps, ps->p, d, sizeof d));
            char *key;
            size_t klen;
            ns_status st = parse_string(ps, &key, &klen);
            if (st) return st;
            NS_GROW(ps->keys, ps->keys_cap, ps->nkeys + 1);
            ps->keys[ps->nkeys++] = key;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail_at(ps, ps->p, "expected ':' after object key, found %s",
                               describe(ps, ps->p, d, sizeof d));
            ps->p++;
            skip_ws(ps);
            ns_json item;
            st = parse_value(ps, &item);
            if (st) return st;
            push_val(ps, &item);
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == '}') {
                ps->p++;
                break;
            }
            return fail_at(ps, ps->p, "expected ',' or '}' after an object member, found %s",
                           describe(ps, ps->p, d, sizeof d));
        }
    }
    size_t n = ps->nvals - base;
    if (n > INT_MAX) return fail(ps, ps->p, "object too long");
    v->n = (int)n;
    v->items = take_vals(ps, base);
    if (n) {
        v->keys = ns_xmalloc(n * sizeof *v->keys);
        memcpy(v->keys, ps->keys + kbase, n * sizeof *v->keys);
    }
    ps->nkeys = kbase;
    ps->depth--;
    return NS_OK;
}

static ns_status parse_literal(parser *ps, const char *word, size_t n)
{
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail_at(ps, ps->p, "invalid literal (expected '%s')", word);
    ps->p += n;
    return NS_OK;
}

/* Reads one value at ps->p (whitespace already skipped).  On failure v holds
 * nothing that needs freeing. */
static ns_status parse_value(parser *ps, ns_json *v)
{
    memset(v, 0, sizeof *v);
    v->line = ps->line;
    v->col = col_of(ps, ps->p);
    if (ps->p >= ps->end) return fail(ps, ps->p, "unexpected end of input (expected a value)");
    switch (*ps->p) {
    case '{': return parse_object(ps, v);
    case '[': return parse_array(ps, v);
    case '"': {
        ns_status st = parse_string(ps, &v->string, &v->string_len);
        if (!st) v->kind = NS_JSON_STRING;
        return st;
    }
    case 't': v->kind = NS_JSON_BOOL; v->boolean = true; return parse_literal(ps, "true", 4);
    case 'f': v->kind = NS_JSON_BOOL; return parse_literal(ps, "false", 5);
    case 'n': return parse_literal(ps, "null", 4);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return parse_number(ps, v);
    default: {
        char d[32];
        return fail_at(ps, ps->p, "expected a JSON value, found %s", describe(ps, ps->p, d, sizeof d));
    }
    }
}

ns_status ns_json_parse(ns_json *out, const char *text, size_t len, const char *path, ns_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text) text = ""; /* (NULL, 0) is empty input */
    parser ps = {.p = text, .end = text + len, .line_start = text, .line = 1, .path = path, .err = err};
    /* RFC 8259 §8.1: a parser may ignore a leading byte order mark. */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) ps.p += 3;
    skip_ws(&ps);
    ns_status st;
    ns_json root;
    if (ps.p >= ps.end) {
        st = fail(&ps, ps.p, "empty input (expected a JSON value)");
    } else if ((st = parse_value(&ps, &root)) == NS_OK) {
        skip_ws(&ps);
        if (ps.p < ps.end) {
            char d[32];
            st = fail_at(&ps, ps.p, "trailing characters after the JSON value: %s",
                         describe(&ps, ps.p, d, sizeof d));
            ns_json_free(&root);
        } else {
            *out = root;
        }
    }
    /* On failure, finished children of unclosed containers are still here. */
    for (size_t i = 0; i < ps.nvals; i++) ns_json_free(&ps.vals[i]);
    for (size_t i = 0; i < ps.nkeys; i++) free(ps.keys[i]);
    free(ps.vals);
    free(ps.keys);
    return st;
}

ns_status ns_json_read(ns_json *out, const char *path, ns_error *err)
{
    char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    ns_status st = ns_read_text_file(path, &text, &len, err);
    if (st) return st;
    st = ns_json_parse(out, text, len, path, err);
    free(text);
    return st;
}

/* ---- sealed files -------------------------------------------------------- */

static bool json_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void ns_json_seal(ns_buf *b)
{
    size_t n = b->len;
    while (n > 0 && json_ws(b->data[n - 1])) n--;
    if (n > 0 && b->data[n - 1] == '}') n--;
    while (n > 0 && json_ws(b->data[n - 1])) n--;
    b->len = n;
    uint32_t crc = ns_crc32(0, b->data, n);
    ns_buf_printf(b, ",\n  \"crc32\": \"%08x\"\n}\n", crc);
}

/* The end of the sealed body of text[0, len) and its stored CRC, or false
 * when the text does not end in a seal. */
static bool find_seal(const char *t, size_t len, size_t *body, uint32_t *crc)
{
    size_t i = len;
    while (i > 0 && json_ws(t[i - 1])) i--;
    if (i == 0 || t[--i] != '}') return false;
    while (i > 0 && json_ws(t[i - 1])) i--;
    if (i < 10 || t[i - 1] != '"') return false;
    uint32_t v = 0;
    for (size_t k = i - 9; k < i - 1; k++) {
        char c = t[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v << 4 | (uint32_t)d;
    }
    i -= 10;
    if (t[i] != '"') return false;
    while (i > 0 && json_ws(t[i - 1])) i--;
    if (i == 0 || t[--i] != ':') return false;
    while (i > 0 && json_ws(t[i - 1])) i--;
    static const char key[] = "\"crc32\"";
    size_t kl = sizeof key - 1;
    if (i < kl || memcmp(t + i - kl, key, kl) != 0) return false;
    i -= kl;
    while (i > 0 && json_ws(t[i - 1])) i--;
    if (i == 0 || t[i - 1] != ',') return false;
    *body = i - 1;
    *crc = v;
    return true;
}

ns_status ns_json_read_sealed(ns_json *out, const char *path, bool *sealed, ns_error *err)
{
    char *text;
    size_t len, body;
    uint32_t crc;
    memset(out, 0, sizeof *out);
    ns_status st = ns_read_text_file(path, &text, &len, err);
    if (st) return st;
    *sealed = find_seal(text, len, &body, &crc);
    if (*sealed && ns_crc32(0, text, body) != crc) {
        uint32_t got = ns_crc32(0, text, body);
        free(text);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "checksum mismatch (crc32 %08x, the file says %08x): edited or damaged", got, crc);
    }
    st = ns_json_parse(out, text, len, path, err);
    free(text);
    return st;
}

ns_status ns_json_check_version(const ns_json *m, const char *path, bool sealed, int64_t current, const char *what,
                                ns_error *err)
{
    int64_t v;
    if (!ns_json_get_int(m, "version", &v) || v < current - 1 || v > current)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0, "unsupported %s version (this build reads %lld and %lld)",
                            what, (long long)current - 1, (long long)current);
    if (v == current && !sealed)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "%s version %lld without its checksum (the \"crc32\" member last): edited or damaged", what,
                            (long long)v);
    return NS_OK;
}

void ns_json_free(ns_json *j)
{
    if (!j) return;
    if (j->items)
        for (int i = 0; i < j->n; i++) ns_json_free(&j->items[i]);
    if (j->keys)
        for (int i = 0; i < j->n; i++) free(j->keys[i]);
    free(j->items);
    free(j->keys);
    free(j->string);
    memset(j, 0, sizeof *j);
}

const ns_json *ns_json_get(const ns_json *obj, const char *key)
{
    if (!obj || obj->kind != NS_JSON_OBJECT || !obj->keys) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

bool ns_json_get_int(const ns_json *obj, const char *key, int64_t *out)
{
    const ns_json *m = ns_json_get(obj, key);
    if (!m || m->kind != NS_JSON_NUMBER || !m->is_integer) return false;
    *out = m->integer;
    return true;
}

bool ns_json_get_str(const ns_json *obj, const char *key, const char **out)
{
    const ns_json *m = ns_json_get(obj, key);
    if (!m || m->kind != NS_JSON_STRING) return false;
    *out = m->string;
    return true;
}

void ns_json_put_strn(ns_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    ns_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        ns_buf_put(b, s + run, i - run);
        run = i + 1;
        char e[7] = {'\\', 0};
        size_t elen = 2;
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\n': e[1] = 'n'; break;
        case '\t': e[1] = 't'; break;
        case '\r': e[1] = 'r'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        default:
            memcpy(e + 1, "u00", 3);
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            elen = 6;
        }
        ns_buf_put(b, e, elen);
    }
    ns_buf_put(b, s + run, n - run);
    ns_buf_putc(b, '"');
}

void ns_json_put_str(ns_buf *b, const char *s)
{
    ns_json_put_strn(b, s, strlen(s));
}

void ns_json_put_num(ns_buf *b, double v)
{
    if (!isfinite(v)) {
        ns_buf_puts(b, "null");
        return;
    }
    /* Integral values below 2^63 print as integers (exact, no exponent). */
    if (v == floor(v) && fabs(v) < 9223372036854775808.0) {
        if (v == 0 && signbit(v))
            ns_buf_puts(b, "-0");
        else
            ns_buf_printf(b, "%lld", (long long)v);
        return;
    }
    char s[40];
    for (int prec = 9; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (prec == 17 || strtod(s, NULL) == v) break;
    }
    ns_buf_puts(b, s);
}
