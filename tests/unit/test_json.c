/* test_json.c — the JSON reader and writer: every kind of value, numbers
 * against strtod, escapes and surrogate pairs, each error with its
 * line:col, nesting limits, every prefix of a document failing cleanly,
 * writing round trips and the speed of large documents. */
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"
#include "test.h"

#include <stdint.h>
#include <unistd.h>

/* Sanitizer and valgrind builds are many times slower: shrink the big
 * inputs and skip the timing checks there. */
static bool slow_build(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    const char *pre = getenv("LD_PRELOAD");
    return getenv("NS_NO_TIMING") || (pre && strstr(pre, "vgpreload"));
}

/* Parses a copy of text in a buffer of exactly its length (no NUL after it),
 * so that the sanitizers catch any read past the end. */
static ns_status parse_exact(ns_json *j, const char *text, size_t len, ns_error *err)
{
    char *copy = ns_xmalloc(len);
    if (len) memcpy(copy, text, len);
    ns_status st = ns_json_parse(j, len ? copy : NULL, len, "doc.json", err);
    free(copy);
    return st;
}

static ns_status parse_str(ns_json *j, const char *text, ns_error *err)
{
    return parse_exact(j, text, strlen(text), err);
}

static void test_kinds(void)
{
    const char *text = "{\n"
                       "  \"null\": null, \"t\": true, \"f\": false,\n"
                       "  \"n\": -12, \"x\": 2.5,\n"
                       "  \"s\": \"hi\", \"a\": [1, [], {}, \"two\"],\n"
                       "  \"o\": {\"k\": \"v\"}, \"n\": 7\n"
                       "}";
    ns_json j;
    ns_error err;
    ns_error_clear(&err);
    CHECK_EQ_INT(parse_str(&j, text, &err), NS_OK);
    CHECK_EQ_INT(j.kind, NS_JSON_OBJECT);
    CHECK_EQ_INT(j.n, 9);
    CHECK_STR(j.keys[0], "null");
    CHECK_STR(j.keys[8], "n");
    CHECK_EQ_INT(ns_json_get(&j, "null")->kind, NS_JSON_NULL);
    CHECK(ns_json_get(&j, "t")->kind == NS_JSON_BOOL && ns_json_get(&j, "t")->boolean);
    CHECK(ns_json_get(&j, "f")->kind == NS_JSON_BOOL && !ns_json_get(&j, "f")->boolean);
    int64_t n = 0;
    CHECK(ns_json_get_int(&j, "n", &n));
    CHECK_EQ_INT(n, -12); /* first match */
    CHECK(!ns_json_get_int(&j, "x", &n));
    CHECK(ns_json_get(&j, "x")->number == 2.5);
    const char *s = NULL;
    CHECK(ns_json_get_str(&j, "s", &s));
    CHECK_STR(s, "hi");
    CHECK(!ns_json_get_str(&j, "n", &s));
    CHECK(!ns_json_get_str(&j, "missing", &s));
    CHECK(ns_json_get(&j, "missing") == NULL);
    const ns_json *a = ns_json_get(&j, "a");
    CHECK(a && a->kind == NS_JSON_ARRAY && a->n == 4);
    if (a && a->n == 4) {
        CHECK(a->items[0].is_integer && a->items[0].integer == 1);
        CHECK(a->items[1].kind == NS_JSON_ARRAY && a->items[1].n == 0);
        CHECK(a->items[2].kind == NS_JSON_OBJECT && a->items[2].n == 0);
        CHECK_STR(a->items[3].string, "two");
        CHECK_EQ_INT(a->items[3].string_len, 3);
        CHECK(ns_json_get(a, "x") == NULL); /* not an object */
        /* Positions: line 4, the array opens at col 28. */
        CHECK_EQ_INT(a->line, 4);
        CHECK_EQ_INT(a->col, 19);
        CHECK_EQ_INT(a->items[3].line, 4);
        CHECK_EQ_INT(a->items[3].col, 31);
    }
    const ns_json *o = ns_json_get(&j, "o");
    CHECK(ns_json_get_str(o, "k", &s));
    CHECK_STR(s, "v");
    CHECK_EQ_INT(j.line, 1);
    CHECK_EQ_INT(j.col, 1);
    ns_json_free(&j);
    CHECK_EQ_INT(j.kind, NS_JSON_NULL);
    ns_json_free(&j); /* freeing twice is harmless */

    /* Scalars at the top level, surrounded by whitespace; a BOM is skipped. */
    CHECK_EQ_INT(parse_str(&j, " \t\r\n 42 \n", &err), NS_OK);
    CHECK(j.is_integer && j.integer == 42 && j.line == 2 && j.col == 2);
    ns_json_free(&j);
    CHECK_EQ_INT(parse_str(&j, "\xef\xbb\xbf\"x\"", &err), NS_OK);
    CHECK_STR(j.string, "x");
    ns_json_free(&j);
    CHECK_EQ_INT(parse_str(&j, "null", &err), NS_OK);
    CHECK_EQ_INT(j.kind, NS_JSON_NULL);
    ns_json_free(&j);
}

typedef struct num_case {
    const char *text;
    bool is_integer;
    int64_t integer;
} num_case;

static void test_numbers(void)
{
    static const num_case cases[] = {
        {"0", true, 0},
        {"-0", true, 0},
        {"12", true, 12},
        {"-3", true, -3},
        {"1e3", false, 0},
        {"1E+2", false, 0},
        {"1e-2", false, 0},
        {"1.0", false, 0},
        {"1.5", false, 0},
        {"-2.25e-3", false, 0},
        {"0.1", false, 0},
        {"0.30000000000000004", false, 0},
        {"123456789012345678", true, 123456789012345678LL},
        {"9223372036854775807", true, INT64_MAX},
        {"-9223372036854775808", true, INT64_MIN},
        {"9223372036854775808", false, 0},
        {"-9223372036854775809", false, 0},
        {"18446744073709551616", false, 0},
        {"12345678901234567890123", false, 0},
        {"1.7976931348623157e308", false, 0},
        {"2.2250738585072014e-308", false, 0},
        {"4.9406564584124654e-324", false, 0},
        {"5e-324", false, 0},
        {"9007199254740993", true, 9007199254740993LL},
        {"9007199254740993.0", false, 0},
        {"0.000000000000000000000000000001", false, 0},
        {"3.141592653589793238462643383279", false, 0},
        {"1e400", false, 0},
        {"-1e400", false, 0},
        {"1e-400", false, 0},
        {"123e-20", false, 0},
        {"4503599627370497e22", false, 0},
        {"7.2057594037927933e16", false, 0},
        {"9007199254740993e0", false, 0},
        {"9007199254740995e0", false, 0},
        {"18014398509481986e-1", false, 0},
        {"9999999999999999999e27", false, 0},
        {"1e-27", false, 0},
        {"0.12345678901234567", false, 0},
        {"1.2345678901234567e-5", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const num_case *c = &cases[i];
        ns_json j;
        ns_error err;
        ns_status st = parse_str(&j, c->text, &err);
        CHECK_EQ_INT(st, NS_OK);
        if (st) {
            printf("  for %s: %s\n", c->text, err.msg);
            continue;
        }
        double want = strtod(c->text, NULL);
        if (j.kind != NS_JSON_NUMBER || memcmp(&j.number, &want, sizeof want) != 0 ||
            j.is_integer != c->is_integer || (c->is_integer && j.integer != c->integer)) {
            printf("  %s: got %.17g (int %d %lld), want %.17g\n", c->text, j.number, j.is_integer,
                   (long long)j.integer, want);
            ns_t_cur_failed = 1;
        }
        ns_json_free(&j);
    }
    /* Random decimals (short and long mantissas, all exponents) agree with
     * strtod bit for bit: checks the fast path and the fallback. */
    ns_rng rng;
    ns_rng_seed(&rng, 7);
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        char t[80];
        int len = 0;
        if (ns_rng_below(&rng, 2)) t[len++] = '-';
        int nd = 1 + (int)ns_rng_below(&rng, i % 4 == 0 ? 25 : 17);
        int point = (int)ns_rng_below(&rng, (uint64_t)nd + 1);
        t[len++] = (char)('1' + ns_rng_below(&rng, 9));
        for (int k = 1; k < nd; k++) {
            if (k == point) t[len++] = '.';
            t[len++] = (char)('0' + ns_rng_below(&rng, 10));
        }
        if (ns_rng_below(&rng, 3)) len += snprintf(t + len, sizeof t - (size_t)len, "e%d", (int)ns_rng_below(&rng, 700) - 350);
        t[len] = '\0';
        ns_json j;
        if (parse_str(&j, t, NULL) != NS_OK) {
            if (bad++ < 5) printf("  rejected %s\n", t);
            continue;
        }
        double want = strtod(t, NULL);
        if (memcmp(&j.number, &want, sizeof want) != 0 && bad++ < 5)
            printf("  %s: got %.17g, want %.17g\n", t, j.number, want);
        ns_json_free(&j);
    }
    CHECK_EQ_INT(bad, 0);
    /* Long mantissas (up to 19 digits) with exponents near the exact range,
     * and halfway cases that must round to even. */
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        char t[80];
        uint64_t m = ns_rng_next(&rng) % 10000000000000000000ull;
        if (i % 4 == 0) m >>= ns_rng_below(&rng, 60);
        if (i % 4 == 1) m = ((UINT64_C(1) << 53) + ns_rng_below(&rng, 1u << 20) * 2 + 1) << ns_rng_below(&rng, 11);
        snprintf(t, sizeof t, "%llue%d", (unsigned long long)m, (int)ns_rng_below(&rng, 61) - 30);
        ns_json j;
        if (parse_str(&j, t, NULL) != NS_OK) {
            if (bad++ < 5) printf("  rejected %s\n", t);
            continue;
        }
        double want = strtod(t, NULL);
        if (memcmp(&j.number, &want, sizeof want) != 0 && bad++ < 5)
            printf("  %s: got %.17g, want %.17g\n", t, j.number, want);
        ns_json_free(&j);
    }
    CHECK_EQ_INT(bad, 0);
    /* -0 keeps its sign. */
    ns_json j;
    CHECK_EQ_INT(parse_str(&j, "-0", NULL), NS_OK);
    CHECK(signbit(j.number));
    ns_json_free(&j);
    CHECK_EQ_INT(parse_str(&j, "-0.0", NULL), NS_OK);
    CHECK(signbit(j.number) && !j.is_integer);
    ns_json_free(&j);
}

static void test_bad_numbers(void)
{
    static const char *bad[] = {"01", "-", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "NaN",
                                "Infinity", "-Infinity", "1.e5", "-.5", "00", "-01", "1e5.0", "1..2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ns_json j;
        ns_error err;
        ns_error_clear(&err);
        ns_status st = parse_str(&j, bad[i], &err);
        if (st != NS_ERR_INPUT) {
            printf("  accepted %s\n", bad[i]);
            ns_t_cur_failed = 1;
        }
        CHECK_EQ_INT(err.code, NS_ERR_INPUT);
        CHECK_EQ_INT(j.kind, NS_JSON_NULL);
        ns_json_free(&j);
    }
}

static void test_strings(void)
{
    ns_json j;
    ns_error err;
    CHECK_EQ_INT(parse_str(&j, "\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t.\"", &err), NS_OK);
    CHECK_STR(j.string, "q\" b\\ s/ \b\f\n\r\t.");
    ns_json_free(&j);
    /* \u escapes: 1, 2, 3 and 4 UTF-8 bytes; upper- and lower-case hex. */
    CHECK_EQ_INT(parse_str(&j, "\"\\u0041\\u00e9\\u00E9\\u20ac\\ud83d\\ude00\\uD834\\uDD1E\\uffff\"", &err), NS_OK);
    CHECK_STR(j.string, "A\xc3\xa9\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf0\x9d\x84\x9e\xef\xbf\xbf");
    ns_json_free(&j);
    /* \u0000 gives an embedded NUL; string_len counts it. */
    CHECK_EQ_INT(parse_str(&j, "\"a\\u0000b\"", &err), NS_OK);
    CHECK_EQ_INT(j.string_len, 3);
    CHECK(memcmp(j.string, "a\0b", 4) == 0);
    ns_json_free(&j);
    /* Raw UTF-8 passes through unchanged. */
    const char *raw = "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"";
    CHECK_EQ_INT(parse_str(&j, raw, &err), NS_OK);
    CHECK_EQ_INT(j.string_len, strlen(raw) - 2);
    CHECK(memcmp(j.string, raw + 1, strlen(raw) - 2) == 0);
    ns_json_free(&j);
    CHECK_EQ_INT(parse_str(&j, "\"\"", &err), NS_OK);
    CHECK_STR(j.string, "");
    CHECK_EQ_INT(j.string_len, 0);
    ns_json_free(&j);
    /* Escaped keys are decoded too. */
    CHECK_EQ_INT(parse_str(&j, "{\"k\\u00e9y\": 1}", &err), NS_OK);
    CHECK_STR(j.keys[0], "k\xc3\xa9y");
    ns_json_free(&j);
}

typedef struct err_case {
    const char *text;
    int line, col;
    const char *msg; /* a substring of the message */
} err_case;

static void test_errors(void)
{
    static const err_case cases[] = {
        {"", 1, 1, "empty input"},
        {"   \n  ", 2, 3, "empty input"},
        {"[1, 2] x", 1, 8, "trailing characters"},
        {"{\"a\": 1}\n}", 2, 1, "trailing characters"},
        {"1 2", 1, 3, "trailing characters"},
        {"\"abc", 1, 1, "unterminated string"},
        {"[\n  \"abc\\", 2, 3, "unterminated string"},
        {"{\"a\": \"x}", 1, 7, "unterminated string"},
        {"[\n  \"abc\\q\"]", 2, 7, "invalid escape"},
        {"\"\\x41\"", 1, 2, "invalid escape"},
        {"\"\\u12\"", 1, 2, "invalid \\u escape"},
        {"\"\\u12g4\"", 1, 2, "invalid \\u escape"},
        {"\"\\ud800\"", 1, 2, "unpaired high surrogate"},
        {"\"\\ud800\\u0041\"", 1, 2, "unpaired high surrogate"},
        {"\"ab\\udc00\"", 1, 4, "unpaired low surrogate"},
        {"\"a\tb\"", 1, 3, "control character U+0009"},
        {"\"a\nb\"", 1, 3, "control character U+000A"},
        {"[\"\x01\"]", 1, 3, "control character U+0001"},
        {"\"\xff\"", 1, 2, "invalid UTF-8"},
        {"\"\xc0\xaf\"", 1, 2, "invalid UTF-8"},
        {"\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8"},
        {"\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8"},
        {"\"\xe2\x82\"", 1, 2, "invalid UTF-8"},
        {"[1 2]", 1, 4, "expected ',' or ']'"},
        {"[1,\n 2\n 3]", 3, 2, "expected ',' or ']'"},
        {"{\"a\" 1}", 1, 6, "expected ':'"},
        {"{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}'"},
        {"[1,]", 1, 4, "expected a JSON value"},
        {"{\"a\":1,}", 1, 8, "expected a string key"},
        {"{1:2}", 1, 2, "expected a string key"},
        {"{'a':2}", 1, 2, "expected a string key"},
        {"[", 1, 2, "unexpected end of input"},
        {"{\"a\":", 1, 6, "unexpected end of input"},
        {"[1", 1, 3, "expected ',' or ']'"},
        {"tru", 1, 1, "invalid literal"},
        {"[nul]", 1, 2, "invalid literal"},
        {"True", 1, 1, "expected a JSON value"},
        {"01", 1, 1, "leading zeros"},
        {"[1.]", 1, 4, "digit after '.'"},
        {"[1e]", 1, 4, "exponent"},
        {"\x01", 1, 1, "byte 0x01"},
        {"/* c */ 1", 1, 1, "expected a JSON value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const err_case *c = &cases[i];
        ns_json j;
        ns_error err;
        ns_error_clear(&err);
        ns_status st = parse_str(&j, c->text, &err);
        if (st != NS_ERR_INPUT || err.code != NS_ERR_INPUT || err.line != c->line || err.col != c->col ||
            !strstr(err.msg, c->msg) || strcmp(err.file, "doc.json") != 0) {
            printf("  case %zu: status %d, got %s:%d:%d: %s; want %d:%d: ...%s...\n", i, (int)st, err.file,
                   err.line, err.col, err.msg, c->line, c->col, c->msg);
            ns_t_cur_failed = 1;
        }
        CHECK_EQ_INT(j.kind, NS_JSON_NULL);
        ns_json_free(&j);
    }
    /* The formatted message carries path:line:col. */
    ns_json j;
    ns_error err;
    parse_str(&j, "[1, 2] x", &err);
    char buf[600];
    ns_error_format(&err, buf, sizeof buf);
    CHECK(strncmp(buf, "doc.json:1:8: ", 14) == 0);
    /* A NULL error pointer is allowed. */
    CHECK_EQ_INT(parse_str(&j, "[", NULL), NS_ERR_INPUT);
}

static char *nested(int depth, const char *open, const char *close, const char *inner)
{
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; i < depth; i++) ns_buf_puts(&b, open);
    ns_buf_puts(&b, inner);
    for (int i = 0; i < depth; i++) ns_buf_puts(&b, close);
    return b.data;
}

static void test_nesting(void)
{
    ns_json j;
    ns_error err;
    char *t = nested(512, "[", "]", "1");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_OK);
    const ns_json *p = &j;
    int depth = 0;
    while (p->kind == NS_JSON_ARRAY && p->n == 1) {
        p = &p->items[0];
        depth++;
    }
    CHECK_EQ_INT(depth, 512);
    CHECK(p->is_integer && p->integer == 1);
    ns_json_free(&j);
    free(t);

    t = nested(513, "[", "]", "1");
    ns_error_clear(&err);
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_ERR_INPUT);
    CHECK_EQ_INT(err.line, 1);
    CHECK_EQ_INT(err.col, 513);
    CHECK(strstr(err.msg, "deeper than 512") != NULL);
    free(t);

    t = nested(512, "{\"k\": ", "}", "[]");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_ERR_INPUT); /* 513 with the inner [] */
    free(t);
    t = nested(511, "{\"k\": [", "]}", "0");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_ERR_INPUT); /* 1022 levels */
    free(t);
    t = nested(256, "{\"k\": [", "]}", "\"deep\"");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_OK);
    ns_json_free(&j);
    free(t);

    /* Failing deep inside many open containers frees what was built. */
    t = nested(200, "[1, {\"a\": \"s\", \"b\": ", "]}", "[1, 2, x]");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_ERR_INPUT);
    free(t);
    /* Very deep input is refused without deep recursion. */
    t = nested(100000, "[", "]", "");
    CHECK_EQ_INT(parse_str(&j, t, &err), NS_ERR_INPUT);
    free(t);
}

static const char *sample_doc =
    "{\n"
    "  \"name\": \"blocks\\u00e9 \\ud83d\\ude00 \\\"q\\\"\",\n"
    "  \"version\": 3,\n"
    "  \"ratio\": -0.125e+2,\n"
    "  \"flags\": [true, false, null],\n"
    "  \"shape\": [1024, 64],\n"
    "  \"files\": [{\"path\": \"a.npy\", \"crc\": 3421780262, \"dtype\": \"<f4\"},\n"
    "            {\"path\": \"b/c.npy\", \"crc\": 0, \"tags\": []}],\n"
    "  \"empty\": {},\n"
    "  \"big\": 12345678901234567890,\n"
    "  \"tiny\": 5e-324,\n"
    "  \"text\": \"tab\\there\\nnew line \\\\ / \\/\"\n"
    "}";

static void test_truncations(void)
{
    size_t n = strlen(sample_doc);
    ns_json j;
    ns_error err;
    CHECK_EQ_INT(parse_exact(&j, sample_doc, n, &err), NS_OK);
    ns_json_free(&j);
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        ns_error_clear(&err);
        ns_status st = parse_exact(&j, sample_doc, len, &err);
        if (st != NS_ERR_INPUT || err.code != NS_ERR_INPUT || err.line < 1 || err.col < 1) {
            if (bad++ < 5) printf("  prefix of %zu bytes: status %d\n", len, (int)st);
            if (st == NS_OK) ns_json_free(&j);
        }
    }
    CHECK_EQ_INT(bad, 0);
    /* The same with every single byte replaced by a stray one: no crash, and
     * the result is either an error or a well-formed tree. */
    char *copy = ns_xstrdup(sample_doc);
    for (size_t i = 0; i < n; i++) {
        static const char junk[] = {'"', '\\', '{', '[', ']', '}', ',', ':', '\x01', '\xc3'};
        for (size_t k = 0; k < sizeof junk; k++) {
            char save = copy[i];
            copy[i] = junk[k];
            if (parse_exact(&j, copy, n, NULL) == NS_OK) ns_json_free(&j);
            copy[i] = save;
        }
    }
    free(copy);
}

/* Writes v back as JSON with the writing helpers. */
static void emit(ns_buf *b, const ns_json *v)
{
    switch (v->kind) {
    case NS_JSON_NULL: ns_buf_puts(b, "null"); break;
    case NS_JSON_BOOL: ns_buf_puts(b, v->boolean ? "true" : "false"); break;
    case NS_JSON_NUMBER:
        if (v->is_integer)
            ns_buf_printf(b, "%lld", (long long)v->integer);
        else
            ns_json_put_num(b, v->number);
        break;
    case NS_JSON_STRING: ns_json_put_strn(b, v->string, v->string_len); break;
    case NS_JSON_ARRAY:
    case NS_JSON_OBJECT:
        ns_buf_putc(b, v->kind == NS_JSON_ARRAY ? '[' : '{');
        for (int i = 0; i < v->n; i++) {
            if (i) ns_buf_putc(b, ',');
            if (v->kind == NS_JSON_OBJECT) {
                ns_json_put_str(b, v->keys[i]);
                ns_buf_putc(b, ':');
            }
            emit(b, &v->items[i]);
        }
        ns_buf_putc(b, v->kind == NS_JSON_ARRAY ? ']' : '}');
        break;
    }
}

static bool same(const ns_json *a, const ns_json *b)
{
    if (a->kind != b->kind || a->n != b->n) return false;
    switch (a->kind) {
    case NS_JSON_NULL: return true;
    case NS_JSON_BOOL: return a->boolean == b->boolean;
    case NS_JSON_NUMBER:
        return memcmp(&a->number, &b->number, sizeof a->number) == 0 && a->is_integer == b->is_integer &&
               (!a->is_integer || a->integer == b->integer);
    case NS_JSON_STRING:
        return a->string_len == b->string_len && memcmp(a->string, b->string, a->string_len) == 0;
    case NS_JSON_ARRAY:
    case NS_JSON_OBJECT:
        for (int i = 0; i < a->n; i++) {
            if (a->kind == NS_JSON_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0) return false;
            if (!same(&a->items[i], &b->items[i])) return false;
        }
        return true;
    }
    return false;
}

static void test_round_trip_document(void)
{
    ns_json a, b;
    ns_error err;
    CHECK_EQ_INT(parse_str(&a, sample_doc, &err), NS_OK);
    ns_buf out;
    ns_buf_init(&out);
    emit(&out, &a);
    CHECK_EQ_INT(parse_exact(&b, out.data, out.len, &err), NS_OK);
    CHECK(same(&a, &b));
    /* Writing again gives the same bytes. */
    ns_buf out2;
    ns_buf_init(&out2);
    emit(&out2, &b);
    CHECK_STR(out.data, out2.data);
    ns_buf_free(&out);
    ns_buf_free(&out2);
    ns_json_free(&a);
    ns_json_free(&b);
}

static void test_put_str(void)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_json_put_str(&b, "plain");
    CHECK_STR(b.data, "\"plain\"");
    b.len = 0;
    ns_json_put_str(&b, "q\"b\\n\nt\tr\rb\bf\fx\x01\x1f\x7f \xc3\xa9/");
    CHECK_STR(b.data, "\"q\\\"b\\\\n\\nt\\tr\\rb\\bf\\fx\\u0001\\u001f\x7f \xc3\xa9/\"");
    b.len = 0;
    ns_json_put_strn(&b, "a\0b", 3);
    CHECK_STR(b.data, "\"a\\u0000b\"");
    /* Every byte 1..255 (as valid UTF-8 where >= 0x80) survives a round trip. */
    ns_buf s;
    ns_buf_init(&s);
    for (int c = 1; c < 128; c++) ns_buf_putc(&s, (char)c);
    ns_buf_puts(&s, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    b.len = 0;
    ns_json_put_str(&b, s.data);
    ns_json j;
    ns_error err;
    CHECK_EQ_INT(parse_exact(&j, b.data, b.len, &err), NS_OK);
    CHECK_EQ_INT(j.string_len, s.len);
    CHECK(j.string && memcmp(j.string, s.data, s.len) == 0);
    ns_json_free(&j);
    ns_buf_free(&s);
    ns_buf_free(&b);
}

static void put_num_is(double v, const char *want)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_json_put_num(&b, v);
    if (strcmp(b.data, want) != 0) {
        printf("  put_num(%.17g) = %s, want %s\n", v, b.data, want);
        ns_t_cur_failed = 1;
    }
    ns_buf_free(&b);
}

static void test_put_num(void)
{
    put_num_is(0, "0");
    put_num_is(-0.0, "-0");
    put_num_is(3, "3");
    put_num_is(-17, "-17");
    put_num_is(1e15, "1000000000000000");
    put_num_is(9007199254740992.0, "9007199254740992");
    put_num_is(0.1, "0.1");
    put_num_is(-2.5, "-2.5");
    put_num_is(1.0 / 3, "0.3333333333333333");
    put_num_is(0.1f, "0.10000000149011612");
    put_num_is(1e300, "1e+300");
    put_num_is(1e-7, "1e-07");
    put_num_is(123456.5, "123456.5");
    put_num_is(-1e19, "-1e+19");
    put_num_is(9223372036854775808.0, "9.223372036854776e+18");
    put_num_is(NAN, "null");
    put_num_is(INFINITY, "null");
    put_num_is(-INFINITY, "null");
    /* Random bit patterns read back exactly. */
    ns_rng rng;
    ns_rng_seed(&rng, 11);
    int bad = 0;
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = ns_rng_next(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (i % 3 == 0) v = (double)(int64_t)(bits >> (bits & 63)) * (i % 2 ? 1 : -1);
        if (i % 3 == 1) v = (double)(float)ns_rng_double(&rng);
        if (!isfinite(v)) continue;
        b.len = 0;
        ns_json_put_num(&b, v);
        ns_json j;
        if (parse_exact(&j, b.data, b.len, NULL) != NS_OK || memcmp(&j.number, &v, sizeof v) != 0) {
            if (bad++ < 5) printf("  %.17g written as %s\n", v, b.data);
        }
        ns_json_free(&j);
    }
    ns_buf_free(&b);
    CHECK_EQ_INT(bad, 0);
}

static void test_large_array(void)
{
    int n = slow_build() ? 200000 : 2000000;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_putc(&b, '[');
    for (int i = 0; i < n; i++) ns_buf_printf(&b, "%s%d", i ? "," : "", i * 3 - 7);
    ns_buf_putc(&b, ']');
    ns_json j;
    ns_error err;
    CHECK_EQ_INT(parse_exact(&j, b.data, b.len, &err), NS_OK);
    CHECK_EQ_INT(j.n, n);
    int bad = 0;
    for (int i = 0; i < j.n; i++)
        if (!j.items[i].is_integer || j.items[i].integer != i * 3 - 7 || j.items[i].col < 1) bad++;
    CHECK_EQ_INT(bad, 0);
    ns_json_free(&j);
    ns_buf_free(&b);
}

/* About 50 MB of typical content (records with numbers, strings and small
 * arrays) parses in a couple of seconds at most. */
static void test_speed(void)
{
    size_t target = slow_build() ? (size_t)2 << 20 : (size_t)50 << 20;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_puts(&b, "{\"records\": [\n");
    ns_rng rng;
    ns_rng_seed(&rng, 3);
    int n = 0;
    while (b.len < target) {
        ns_buf_printf(&b, "%s{\"id\": %d, \"state\": \"s%llu\", \"x\": %.6f, \"v\": [%.9g, %.9g, %.9g, %d]}",
                      n ? ",\n" : "", n, (unsigned long long)ns_rng_below(&rng, 1000000), ns_rng_double(&rng),
                      ns_rng_double(&rng), -ns_rng_double(&rng) * 1e-3, ns_rng_double(&rng) * 1e5,
                      (int)ns_rng_below(&rng, 100));
        n++;
    }
    ns_buf_puts(&b, "\n]}");
    ns_json j;
    ns_error err;
    double t0 = ns_now();
    ns_status st = ns_json_parse(&j, b.data, b.len, "big.json", &err);
    double t1 = ns_now();
    CHECK_EQ_INT(st, NS_OK);
    const ns_json *r = ns_json_get(&j, "records");
    CHECK(r && r->n == n);
    if (r && r->n == n) {
        CHECK_EQ_INT(r->items[n - 1].line, n + 1);
        int64_t id = -1;
        CHECK(ns_json_get_int(&r->items[n - 1], "id", &id) && id == n - 1);
    }
    ns_json_free(&j);
    double t2 = ns_now();
    printf("  parsed %.1f MB (%d records) in %.3f s, freed in %.3f s\n", (double)b.len / 1e6, n, t1 - t0,
           t2 - t1);
    if (!slow_build()) CHECK(t1 - t0 < 3.0);
    ns_buf_free(&b);
}

static void test_read_file(void)
{
    char dir[] = "/tmp/ns_test_json_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64], bad[64];
    snprintf(path, sizeof path, "%s/m.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    const char *good = "{\"n\": 5}\n";
    const char *broken = "{\"n\": 5,\n \"m\" 6}\n";
    ns_error err;
    CHECK_EQ_INT(ns_write_file_atomic(path, good, strlen(good), &err), NS_OK);
    CHECK_EQ_INT(ns_write_file_atomic(bad, broken, strlen(broken), &err), NS_OK);
    ns_json j;
    CHECK_EQ_INT(ns_json_read(&j, path, &err), NS_OK);
    int64_t n = 0;
    CHECK(ns_json_get_int(&j, "n", &n) && n == 5);
    ns_json_free(&j);
    ns_error_clear(&err);
    CHECK_EQ_INT(ns_json_read(&j, bad, &err), NS_ERR_INPUT);
    CHECK_STR(err.file, bad);
    CHECK_EQ_INT(err.line, 2);
    CHECK_EQ_INT(err.col, 6);
    ns_error_clear(&err);
    char missing[80];
    snprintf(missing, sizeof missing, "%s/missing.json", dir);
    CHECK_EQ_INT(ns_json_read(&j, missing, &err), NS_ERR_IO);
    CHECK_STR(err.file, missing);
    CHECK_EQ_INT(j.kind, NS_JSON_NULL);
    remove(path);
    remove(bad);
    rmdir(dir);
}

int main(void)
{
    NS_RUN(test_kinds);
    NS_RUN(test_numbers);
    NS_RUN(test_bad_numbers);
    NS_RUN(test_strings);
    NS_RUN(test_errors);
    NS_RUN(test_nesting);
    NS_RUN(test_truncations);
    NS_RUN(test_round_trip_document);
    NS_RUN(test_put_str);
    NS_RUN(test_put_num);
    NS_RUN(test_large_array);
    NS_RUN(test_speed);
    NS_RUN(test_read_file);
    return ns_test_summary("test_json");
}
