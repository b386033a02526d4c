/* test_npy.c — .npy arrays: byte-for-byte agreement with files numpy.save
 * wrote (tests/fixtures/npy, made by dev/make_npy_fixtures.py), round trips
 * of every dtype and rank, 64-byte header alignment, format versions 2 and
 * 3, every truncation and corruption failing cleanly, unsupported dtypes and
 * layouts, and CRC-32 (value, incremental use, speed). */
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"
#include "test.h"

#include <stdint.h>
#include <unistd.h>

#define FIXTURES "tests/fixtures/npy/"

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

/* The contents dev/make_npy_fixtures.py gives element k of each dtype. */
static void fill(ns_array *a)
{
    int64_t n = ns_array_count(a);
    for (int64_t k = 0; k < n; k++) {
        switch (a->dtype) {
        case NS_U8: ((uint8_t *)a->data)[k] = (uint8_t)((k * 37 + 3) % 256); break;
        case NS_I32: ((int32_t *)a->data)[k] = (int32_t)((k - 5) * 1000003); break;
        case NS_I64: ((int64_t *)a->data)[k] = (k - 3) * 1099511627791LL; break;
        case NS_U64: ((uint64_t *)a->data)[k] = (uint64_t)k * 0x9E3779B97F4A7C15ull; break;
        case NS_F32: ((float *)a->data)[k] = (float)(((double)k - 2.5) * 0.375); break;
        case NS_F64: ((double *)a->data)[k] = (double)k * 0.1 - 1.0; break;
        }
    }
}

static bool same_array(const ns_array *a, const ns_array *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    size_t n = (size_t)ns_array_count(a) * ns_dtype_size(a->dtype);
    return n == 0 || memcmp(a->data, b->data, n) == 0;
}

typedef struct fixture {
    const char *file;
    ns_dtype dtype;
    int ndim;
    int64_t shape[4];
} fixture;

static const fixture fixtures[] = {
    {"u1_5.npy", NS_U8, 1, {5}},
    {"u1_300.npy", NS_U8, 1, {300}},
    {"i4_3x4.npy", NS_I32, 2, {3, 4}},
    {"i8_2x3x2.npy", NS_I64, 3, {2, 3, 2}},
    {"u8_4.npy", NS_U64, 1, {4}},
    {"f4_2x3.npy", NS_F32, 2, {2, 3}},
    {"f4_2x0.npy", NS_F32, 2, {2, 0}},
    {"f8_scalar.npy", NS_F64, 0, {0}},
    {"f8_1x2x1x3.npy", NS_F64, 4, {1, 2, 1, 3}},
    {"i4_pad64.npy", NS_I32, 4, {0, 1000000000000, 10000000000, 10000000000}},
};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

static bool read_fixture(const char *name, char **data, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, FIXTURES "%s", name);
    ns_error err;
    if (ns_read_file(path, data, len, &err) != NS_OK) {
        printf("  cannot read %s (tests run from the repository root)\n", path);
        return false;
    }
    return true;
}

/* The bitwise definition of a reflected CRC-32 with polynomial poly. */
static uint32_t crc_bitwise(uint32_t poly, const unsigned char *p, size_t len)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (poly & (0u - (c & 1u)));
    }
    return ~c;
}

static void test_crc32(void)
{
    CHECK(ns_crc32(0, "123456789", 9) == 0xCBF43926u);
    CHECK(ns_crc32(0, "", 0) == 0);
    CHECK(ns_crc32(0, "a", 1) == 0xE8B7BE43u);
    CHECK(ns_crc32(0, "The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);
    /* Against a bitwise CRC, for every length and alignment up to 64, and
     * incrementally in arbitrary pieces. */
    unsigned char buf[300];
    ns_rng rng;
    ns_rng_seed(&rng, 5);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)ns_rng_next(&rng);
    int bad = 0;
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len + off <= sizeof buf; len++) {
            uint32_t c = crc_bitwise(0xEDB88320u, buf + off, len);
            if (ns_crc32(0, buf + off, len) != c) bad++;
            size_t cut = len ? (size_t)ns_rng_below(&rng, len + 1) : 0;
            if (ns_crc32(ns_crc32(0, buf + off, cut), buf + off + cut, len - cut) != c) bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* CRC-32C: known answers (RFC 3720's test vectors), the bitwise definition
 * for every length and alignment up to 300, incremental pieces, and the
 * SSE4.2 path (where the CPU has it) equal to the table one. */
static void test_crc32c(void)
{
    CHECK(ns_crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(ns_crc32c(0, "", 0) == 0);
    unsigned char zeros[32] = {0}, ones[32], inc[32];
    for (int i = 0; i < 32; i++) ones[i] = 0xFF, inc[i] = (unsigned char)i;
    CHECK(ns_crc32c(0, zeros, 32) == 0x8A9136AAu);
    CHECK(ns_crc32c(0, ones, 32) == 0x62A8AB43u);
    CHECK(ns_crc32c(0, inc, 32) == 0x46DD794Eu);
    CHECK(ns_crc32c_portable(0, inc, 32) == 0x46DD794Eu);
    unsigned char buf[300];
    ns_rng rng;
    ns_rng_seed(&rng, 7);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)ns_rng_next(&rng);
    int bad = 0;
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len + off <= sizeof buf; len++) {
            uint32_t c = crc_bitwise(0x82F63B78u, buf + off, len);
            if (ns_crc32c(0, buf + off, len) != c || ns_crc32c_portable(0, buf + off, len) != c) bad++;
            size_t cut = len ? (size_t)ns_rng_below(&rng, len + 1) : 0;
            if (ns_crc32c(ns_crc32c(0, buf + off, cut), buf + off + cut, len - cut) != c) bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_fixtures_encode(void)
{
    for (size_t i = 0; i < NFIX; i++) {
        const fixture *f = &fixtures[i];
        char *want;
        size_t want_len;
        if (!read_fixture(f->file, &want, &want_len)) {
            ns_t_cur_failed = 1;
            continue;
        }
        ns_array a;
        ns_array_init(&a, f->dtype, f->ndim, f->shape);
        fill(&a);
        ns_buf b;
        ns_buf_init(&b);
        ns_npy_encode(&a, &b);
        if (b.len != want_len || memcmp(b.data, want, want_len) != 0) {
            size_t k = 0;
            while (k < b.len && k < want_len && b.data[k] == want[k]) k++;
            printf("  %s: %zu bytes, numpy wrote %zu; first difference at byte %zu\n", f->file, b.len, want_len, k);
            ns_t_cur_failed = 1;
        }
        /* Decoding numpy's bytes gives the same array back. */
        ns_array r;
        ns_error err;
        CHECK_EQ_INT(ns_npy_decode(&r, want, want_len, f->file, &err), NS_OK);
        CHECK(same_array(&a, &r));
        ns_array_free(&r);
        /* ns_npy_read reports the CRC of the file's bytes. */
        char path[256];
        snprintf(path, sizeof path, FIXTURES "%s", f->file);
        uint32_t crc = 0;
        CHECK_EQ_INT(ns_npy_read(path, &r, &crc, &err), NS_OK);
        CHECK(crc == ns_crc32(0, want, want_len));
        CHECK(same_array(&a, &r));
        ns_array_free(&r);
        ns_buf_free(&b);
        ns_array_free(&a);
        free(want);
    }
}

static void test_versions(void)
{
    static const struct {
        const char *file;
        ns_dtype dtype;
        int ndim;
        int64_t shape[4];
    } cases[] = {
        {"i4_3x4_v2.npy", NS_I32, 2, {3, 4}},
        {"u1_5_v3.npy", NS_U8, 1, {5}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *data;
        size_t len;
        if (!read_fixture(cases[i].file, &data, &len)) {
            ns_t_cur_failed = 1;
            continue;
        }
        ns_array want, got;
        ns_array_init(&want, cases[i].dtype, cases[i].ndim, cases[i].shape);
        fill(&want);
        ns_error err;
        CHECK_EQ_INT(ns_npy_decode(&got, data, len, cases[i].file, &err), NS_OK);
        CHECK(same_array(&want, &got));
        ns_array_free(&got);
        ns_array_free(&want);
        /* Every truncation of these fails too. */
        int bad = 0;
        for (size_t n = 0; n < len; n++)
            if (ns_npy_decode(&got, data, n, "t.npy", &err) != NS_ERR_INPUT) bad++;
        CHECK_EQ_INT(bad, 0);
        free(data);
    }
}

/* Header length (magic + version + length field + dict) of an encoding. */
static size_t header_len(const ns_buf *b)
{
    return 10 + ((size_t)(unsigned char)b->data[8] | (size_t)(unsigned char)b->data[9] << 8);
}

static void test_round_trip(void)
{
    static const int64_t shapes[][5] = {
        /* ndim, dims… */
        {0}, {1, 0}, {1, 1}, {1, 7}, {1, 1000}, {2, 3, 4}, {2, 0, 5}, {2, 1, 1},
        {3, 2, 3, 5}, {3, 4, 1, 2}, {4, 2, 3, 1, 4}, {4, 1, 1, 1, 1}, {1, 12345678},
    };
    char dir[] = "/tmp/ns_test_npy_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    for (int t = NS_U8; t <= NS_F64; t++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int ndim = (int)shapes[s][0];
            int64_t shape[4] = {0};
            for (int i = 0; i < ndim; i++) shape[i] = shapes[s][1 + i];
            if (shape[0] == 12345678 && t != NS_U8) continue; /* keep it small: 12 MB, u8 only */
            if (shape[0] == 12345678 && slow_build()) continue;
            ns_array a, r;
            ns_array_init(&a, (ns_dtype)t, ndim, shape);
            CHECK_EQ_INT(ns_array_count(&a), ndim == 0 ? 1 : shape[0] * (ndim > 1 ? shape[1] : 1) *
                                                                 (ndim > 2 ? shape[2] : 1) * (ndim > 3 ? shape[3] : 1));
            fill(&a);
            ns_buf b;
            ns_buf_init(&b);
            ns_npy_encode(&a, &b);
            size_t h = header_len(&b);
            size_t bytes = (size_t)ns_array_count(&a) * ns_dtype_size(a.dtype);
            CHECK_EQ_INT(h % 64, 0);
            CHECK_EQ_INT(b.len, h + bytes);
            CHECK(b.data[h - 1] == '\n');
            CHECK(b.data[6] == 1 && b.data[7] == 0);
            uint32_t wcrc = 0, rcrc = 1;
            ns_error err;
            CHECK_EQ_INT(ns_npy_write(path, &a, &wcrc, &err), NS_OK);
            CHECK(wcrc == ns_crc32(0, b.data, b.len));
            CHECK_EQ_INT(ns_npy_read(path, &r, &rcrc, &err), NS_OK);
            CHECK(wcrc == rcrc);
            CHECK(same_array(&a, &r));
            ns_array_free(&r);
            ns_buf_free(&b);
            ns_array_free(&a);
        }
    }
    remove(path);
    rmdir(dir);
}

static void test_header_text(void)
{
    /* The dict text and padding as numpy makes them, including the edge
     * where the text (with numpy's spare room) fills 117 bytes and numpy pads with a whole 64. */
    static const struct {
        int ndim;
        int64_t shape[4];
        const char *dict;
        size_t header;
    } cases[] = {
        {0, {0}, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", 128},
        {1, {3}, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 128},
        {2, {3, 4}, "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }", 128},
        {4, {0, 1000000000000, 10000000000, 10000000000},
         "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 1000000000000, 10000000000, 10000000000), }", 192},
        {4, {0, 10000000000, 10000000000, 10000000000},
         "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 10000000000, 10000000000, 10000000000), }", 128},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ns_array a;
        ns_array_init(&a, NS_I32, cases[i].ndim, cases[i].shape);
        ns_buf b;
        ns_buf_init(&b);
        ns_npy_encode(&a, &b);
        CHECK(memcmp(b.data, "\x93NUMPY\x01\x00", 8) == 0);
        CHECK_EQ_INT(header_len(&b), cases[i].header);
        size_t dl = strlen(cases[i].dict);
        CHECK(memcmp(b.data + 10, cases[i].dict, dl) == 0);
        for (size_t k = 10 + dl; k + 1 < header_len(&b); k++) CHECK(b.data[k] == ' ');
        ns_array r;
        ns_error err;
        CHECK_EQ_INT(ns_npy_decode(&r, b.data, b.len, "h.npy", &err), NS_OK);
        CHECK(same_array(&a, &r));
        ns_array_free(&r);
        ns_buf_free(&b);
        ns_array_free(&a);
    }
}

static void test_truncations(void)
{
    for (size_t i = 0; i < NFIX; i++) {
        char *data;
        size_t len;
        if (!read_fixture(fixtures[i].file, &data, &len)) {
            ns_t_cur_failed = 1;
            continue;
        }
        int bad = 0;
        size_t hlen = 10 + ((size_t)(unsigned char)data[8] | (size_t)(unsigned char)data[9] << 8);
        for (size_t n = 0; n < len; n++) {
            /* An exactly-sized copy so the sanitizers see any over-read. */
            char *copy = ns_xmalloc(n ? n : 1);
            memcpy(copy, data, n);
            ns_array a;
            ns_error err;
            ns_error_clear(&err);
            ns_status st = ns_npy_decode(&a, copy, n, "cut.npy", &err);
            if (st != NS_ERR_INPUT || err.code != NS_ERR_INPUT || strcmp(err.file, "cut.npy") != 0) {
                if (bad++ < 3) printf("  %s cut to %zu bytes: status %d: %s\n", fixtures[i].file, n, (int)st, err.msg);
                if (st == NS_OK) ns_array_free(&a);
            }
            if (n >= hlen) {
                char want[128];
                snprintf(want, sizeof want, "truncated: expected %zu bytes of data, found %zu", len - hlen, n - hlen);
                if (strcmp(err.msg, want) != 0 && bad++ < 3) printf("  message \"%s\", want \"%s\"\n", err.msg, want);
                char full[512];
                ns_error_format(&err, full, sizeof full);
                CHECK(strncmp(full, "cut.npy: truncated: ", 20) == 0);
            }
            CHECK(a.data == NULL);
            free(copy);
        }
        CHECK_EQ_INT(bad, 0);
        /* One byte too many is an error as well. */
        char *longer = ns_xmalloc(len + 1);
        memcpy(longer, data, len);
        longer[len] = 0;
        ns_array a;
        ns_error err;
        CHECK_EQ_INT(ns_npy_decode(&a, longer, len + 1, "long.npy", &err), NS_ERR_INPUT);
        CHECK(strstr(err.msg, "trailing data") != NULL);
        free(longer);
        free(data);
    }
}

static void test_bad_magic(void)
{
    char *data;
    size_t len;
    if (!read_fixture("i4_3x4.npy", &data, &len)) {
        ns_t_cur_failed = 1;
        return;
    }
    for (size_t k = 0; k < 6; k++) {
        char save = data[k];
        data[k] ^= 0x20;
        ns_array a;
        ns_error err;
        CHECK_EQ_INT(ns_npy_decode(&a, data, len, "bad.npy", &err), NS_ERR_INPUT);
        CHECK(strstr(err.msg, "not a .npy file") != NULL);
        CHECK_STR(err.file, "bad.npy");
        data[k] = save;
    }
    /* Not a .npy at all, and a missing file. */
    ns_array a;
    ns_error err;
    CHECK_EQ_INT(ns_npy_decode(&a, "PK\x03\x04 zip", 10, "x.npz", &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "not a .npy file") != NULL);
    CHECK_EQ_INT(ns_npy_read("tests/fixtures/npy/no_such_file.npy", &a, NULL, &err), NS_ERR_IO);
    CHECK(a.data == NULL);
    /* Unknown format versions are unsupported. */
    data[6] = 4;
    CHECK_EQ_INT(ns_npy_decode(&a, data, len, "v4.npy", &err), NS_ERR_UNSUPPORTED);
    data[6] = 1;
    data[7] = 1;
    CHECK_EQ_INT(ns_npy_decode(&a, data, len, "v11.npy", &err), NS_ERR_UNSUPPORTED);
    free(data);
}

static void test_unsupported_fixtures(void)
{
    static const struct {
        const char *file;
        const char *msg;
    } cases[] = {
        {"unsupported_be_i4.npy", "'>i4'"},
        {"unsupported_i2.npy", "'<i2'"},
        {"unsupported_fortran.npy", "Fortran"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, FIXTURES "%s", cases[i].file);
        ns_array a;
        ns_error err;
        ns_error_clear(&err);
        CHECK_EQ_INT(ns_npy_read(path, &a, NULL, &err), NS_ERR_UNSUPPORTED);
        CHECK(strstr(err.msg, cases[i].msg) != NULL);
        CHECK_STR(err.file, path);
        CHECK(a.data == NULL);
    }
}

/* A version-1.0 image with the given dict text (padded like numpy) and
 * payload. */
static void make_npy(ns_buf *out, const char *dict, const void *payload, size_t n)
{
    size_t dl = strlen(dict), total = dl + 1;
    while ((10 + total) % 64) total++;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(total & 0xff),
                             (unsigned char)(total >> 8)};
    out->len = 0;
    ns_buf_put(out, pre, 10);
    ns_buf_puts(out, dict);
    for (size_t k = dl + 1; k < total; k++) ns_buf_putc(out, ' ');
    ns_buf_putc(out, '\n');
    ns_buf_put(out, payload, n);
}

static void test_header_variants(void)
{
    static const unsigned char payload[24] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
                                              4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};
    static const struct {
        const char *dict;
        size_t n;
        ns_status want;
        ns_dtype dtype;
        int ndim;
    } cases[] = {
        /* Accepted: any key order, spacing, quotes, trailing commas, 'L'. */
        {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}", 24, NS_OK, NS_I32, 2},
        {"{ \"descr\" : \"<i4\" ,\n 'fortran_order':False,'shape':( 6 , ) , }", 24, NS_OK, NS_I32, 1},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }", 24, NS_OK, NS_I32, 2},
        {"{'descr': '<u1', 'fortran_order': False, 'shape': (4, 6), }", 24, NS_OK, NS_U8, 2},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (24,), }", 24, NS_OK, NS_U8, 1},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24, NS_OK, NS_F64, 1},
        {"{'descr': '<u8', 'fortran_order': False, 'shape': (1, 1, 1, 3), }", 24, NS_OK, NS_U64, 4},
        /* Unsupported: other dtypes, Fortran order, structured, 5-D. */
        {"{'descr': '>i4', 'fortran_order': False, 'shape': (6,), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': '|b1', 'fortran_order': False, 'shape': (24,), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': '<U1', 'fortran_order': False, 'shape': (6,), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (6,), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3, 4, 1), }", 24, NS_ERR_UNSUPPORTED, 0, 0},
        /* Malformed. */
        {"{'descr': '<i4', 'fortran_order': False}", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'shape': (6,)}", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (6,), 'x': 1}", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (-6,), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': [6], }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': false, 'shape': (6,), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (6,) 'x'}", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (6,), } x", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (6,), ", 24, NS_ERR_INPUT, 0, 0},
        {"'descr': '<i4', 'fortran_order': False, 'shape': (6,)", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr: '<i4', 'fortran_order': False, 'shape': (6,), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<u8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 24, NS_ERR_INPUT, 0, 0},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (7,), }", 24, NS_ERR_INPUT, 0, 0},
        {"", 24, NS_ERR_INPUT, 0, 0},
    };
    ns_buf b;
    ns_buf_init(&b);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_npy(&b, cases[i].dict, payload, cases[i].n);
        ns_array a;
        ns_error err;
        ns_error_clear(&err);
        ns_status st = ns_npy_decode(&a, b.data, b.len, "v.npy", &err);
        if (st != cases[i].want) {
            printf("  case %zu: status %d (%s), want %d\n", i, (int)st, err.msg, (int)cases[i].want);
            ns_t_cur_failed = 1;
        }
        if (st == NS_OK) {
            CHECK_EQ_INT(a.dtype, cases[i].dtype);
            CHECK_EQ_INT(a.ndim, cases[i].ndim);
            CHECK(memcmp(a.data, payload, 24) == 0);
            ns_array_free(&a);
        } else {
            CHECK_STR(err.file, "v.npy");
            CHECK(a.data == NULL);
        }
    }
    ns_buf_free(&b);
}

static void test_write_error(void)
{
    ns_array a;
    int64_t shape[1] = {3};
    ns_array_init(&a, NS_F32, 1, shape);
    ns_error err;
    uint32_t crc = 7;
    CHECK_EQ_INT(ns_npy_write("/nonexistent_dir_ns/x.npy", &a, &crc, &err), NS_ERR_IO);
    CHECK_EQ_INT(crc, 7);
    CHECK_EQ_INT(ns_npy_write("/tmp/ns_test_npy_nocrc.npy", &a, NULL, &err), NS_OK);
    remove("/tmp/ns_test_npy_nocrc.npy");
    ns_array_free(&a);
    CHECK_EQ_INT(ns_dtype_size(NS_U8), 1);
    CHECK_EQ_INT(ns_dtype_size(NS_I32), 4);
    CHECK_EQ_INT(ns_dtype_size(NS_I64), 8);
    CHECK_EQ_INT(ns_dtype_size(NS_U64), 8);
    CHECK_EQ_INT(ns_dtype_size(NS_F32), 4);
    CHECK_EQ_INT(ns_dtype_size(NS_F64), 8);
}

int main(void)
{
    NS_RUN(test_crc32);
    NS_RUN(test_crc32c);
    NS_RUN(test_fixtures_encode);
    NS_RUN(test_versions);
    NS_RUN(test_round_trip);
    NS_RUN(test_header_text);
    NS_RUN(test_truncations);
    NS_RUN(test_bad_magic);
    NS_RUN(test_unsupported_fixtures);
    NS_RUN(test_header_variants);
    NS_RUN(test_write_error);
    return ns_test_summary("test_npy");
}
