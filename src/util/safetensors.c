/* safetensors.c — validated reading of .safetensors files (see safetensors.h). */
#include "nextstate/util/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"

static const char *const dtype_names[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL"};
static const size_t dtype_sizes[] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1};

size_t ns_st_dtype_size(ns_st_dtype t) { return dtype_sizes[t]; }
const char *ns_st_dtype_name(ns_st_dtype t) { return dtype_names[t]; }

float ns_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3FF) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float ns_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

void ns_st_close(ns_safetensors *st)
{
    if (!st) return;
    if (st->map) munmap((void *)st->map, st->size);
    for (int i = 0; i < st->n; i++) free(st->tensors[i].name);
    free(st->tensors);
    free(st->path);
    memset(st, 0, sizeof *st);
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

ns_status ns_st_open(ns_safetensors *st, const char *path, ns_error *err)
{
    memset(st, 0, sizeof *st);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ns_error_set(err, NS_ERR_IO, path, 0, 0, "not a regular file");
    }
    size_t size = (size_t)sb.st_size;
    if (size < 8) {
        close(fd);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "truncated safetensors file: %zu bytes, too short for the 8-byte header length", size);
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot map: %s", strerror(errno));
    st->map = map;
    st->size = size;
    st->path = ns_xstrdup(path);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st->map[i];
    if (hlen > size - 8) {
        ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                     "truncated or not a safetensors file: the header claims %llu bytes but only %zu follow",
                     (unsigned long long)hlen, size - 8);
        ns_st_close(st);
        return NS_ERR_INPUT;
    }
    st->data_start = 8 + (size_t)hlen;
    size_t data_size = size - st->data_start;
    ns_json h;
    if (ns_json_parse(&h, (const char *)st->map + 8, (size_t)hlen, path, err) != NS_OK) {
        if (err) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            snprintf(err->msg, sizeof err->msg, "bad safetensors header JSON: %.480s", msg);
        }
        ns_st_close(st);
        return NS_ERR_INPUT;
    }
    ns_status rc = NS_OK;
    if (h.kind != NS_JSON_OBJECT) {
        rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "bad safetensors header: not a JSON object");
        goto done;
    }
    st->tensors = ns_xcalloc((size_t)h.n + 1, sizeof *st->tensors);
    for (int i = 0; i < h.n; i++) {
        const char *name = h.keys[i];
        const ns_json *e = &h.items[i];
        if (!strcmp(name, "__metadata__")) continue;
        ns_st_tensor *t = &st->tensors[st->n];
        const char *dt;
        const ns_json *shape = ns_json_get(e, "shape"), *off = ns_json_get(e, "data_offsets");
        if (e->kind != NS_JSON_OBJECT || !ns_json_get_str(e, "dtype", &dt) || !shape || shape->kind != NS_JSON_ARRAY ||
            !off || off->kind != NS_JSON_ARRAY || off->n != 2) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "bad safetensors header: tensor \"%s\" needs dtype, shape and data_offsets [begin, end]",
                              name);
            goto done;
        }
        int k = -1;
        for (int d = 0; d < (int)(sizeof dtype_names / sizeof *dtype_names); d++)
            if (!strcmp(dt, dtype_names[d])) k = d;
        if (k < 0) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "tensor \"%s\": unsupported dtype \"%s\"", name, dt);
            goto done;
        }
        if (shape->n > NS_ST_MAX_DIMS) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "tensor \"%s\": %d dimensions (at most %d)", name,
                              shape->n, NS_ST_MAX_DIMS);
            goto done;
        }
        t->name = ns_xstrdup(name);
        st->n++;
        t->dtype = (ns_st_dtype)k;
        t->ndim = shape->n;
        uint64_t count = 1;
        bool ok = true;
        for (int d = 0; d < shape->n; d++) {
            const ns_json *v = &shape->items[d];
            ok &= v->kind == NS_JSON_NUMBER && v->is_integer && v->integer >= 0 && v->integer < ((int64_t)1 << 40);
            t->shape[d] = ok ? v->integer : 0;
            if (ok) count *= (uint64_t)t->shape[d];
            ok &= count < ((uint64_t)1 << 40);
        }
        const ns_json *b = &off->items[0], *en = &off->items[1];
        ok &= b->kind == NS_JSON_NUMBER && b->is_integer && en->kind == NS_JSON_NUMBER && en->is_integer &&
              b->integer >= 0 && en->integer >= b->integer;
        if (!ok) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "bad safetensors header: tensor \"%s\" has a bad shape or offsets",
                              name);
            goto done;
        }
        t->begin = (size_t)b->integer;
        t->end = (size_t)en->integer;
        if ((uint64_t)(t->end - t->begin) != count * dtype_sizes[k]) {
            char s[128];
            shape_str(s, sizeof s, t->ndim, t->shape);
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "tensor \"%s\": %s %s needs %llu bytes but data_offsets span %zu", name, dt, s,
                              (unsigned long long)(count * dtype_sizes[k]), t->end - t->begin);
            goto done;
        }
        if (t->end > data_size) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "truncated safetensors file: tensor \"%s\" ends at byte %zu of the data but the file holds "
                              "only %zu data bytes (%zu in all)",
                              name, t->end, data_size, size);
            goto done;
        }
    }
    /* no two tensors may share bytes (a crafted header could alias them) */
    for (int i = 0; i < st->n && rc == NS_OK; i++)
        for (int j = i + 1; j < st->n; j++) {
            const ns_st_tensor *a = &st->tensors[i], *b = &st->tensors[j];
            if (a->begin < b->end && b->begin < a->end) {
                rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                                  "bad safetensors header: tensors \"%s\" [%zu, %zu) and \"%s\" [%zu, %zu) overlap",
                                  a->name, a->begin, a->end, b->name, b->begin, b->end);
                break;
            }
        }
done:
    ns_json_free(&h);
    if (rc != NS_OK) ns_st_close(st);
    return rc;
}

const ns_st_tensor *ns_st_find(const ns_safetensors *st, const char *name)
{
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->tensors[i].name, name)) return &st->tensors[i];
    return NULL;
}

ns_status ns_st_read_f32(const ns_safetensors *st, const char *name, int ndim, const int64_t *shape, float *out,
                         ns_error *err)
{
    const ns_st_tensor *t = ns_st_find(st, name);
    if (!t) return ns_error_set(err, NS_ERR_INPUT, st->path, 0, 0, "missing tensor \"%s\"", name);
    bool same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char a[128], b[128];
        shape_str(a, sizeof a, t->ndim, t->shape);
        shape_str(b, sizeof b, ndim, shape);
        return ns_error_set(err, NS_ERR_INPUT, st->path, 0, 0, "tensor \"%s\" has shape %s, expected %s", name, a, b);
    }
    const unsigned char *p = st->map + st->data_start + t->begin;
    size_t count = (t->end - t->begin) / dtype_sizes[t->dtype];
    switch (t->dtype) {
    case NS_ST_F32:
        memcpy(out, p, count * 4); /* little-endian host assumed, as npy.c does */
        break;
    case NS_ST_F16:
    case NS_ST_BF16:
        for (size_t i = 0; i < count; i++) {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            out[i] = t->dtype == NS_ST_F16 ? ns_f16_to_f32(h) : ns_bf16_to_f32(h);
        }
        break;
    case NS_ST_F64:
        for (size_t i = 0; i < count; i++) {
            double d;
            memcpy(&d, p + 8 * i, 8);
            out[i] = (float)d;
        }
        break;
    default:
        return ns_error_set(err, NS_ERR_INPUT, st->path, 0, 0, "tensor \"%s\" has dtype %s, expected a float type",
                            name, dtype_names[t->dtype]);
    }
    return NS_OK;
}

ns_status ns_st_write_f32(const char *path, int n, const char *const *names, const int *ndims,
                          const int64_t *const *shapes, const float *const *data, ns_error *err)
{
    ns_buf h;
    ns_buf_init(&h);
    ns_buf_puts(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t count = 1;
        ns_buf_putc(&h, ',');
        ns_json_put_str(&h, names[i]);
        ns_buf_puts(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < ndims[i]; d++) {
            ns_buf_printf(&h, "%s%lld", d ? "," : "", (long long)shapes[i][d]);
            count *= (size_t)shapes[i][d];
        }
        ns_buf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + 4 * count);
        off += 4 * count;
    }
    ns_buf_putc(&h, '}');
    while (h.len % 8) ns_buf_putc(&h, ' '); /* pad so the data starts 8-aligned */
    ns_buf f;
    ns_buf_init(&f);
    for (int i = 0; i < 8; i++) ns_buf_putc(&f, (char)(((uint64_t)h.len >> (8 * i)) & 0xFF));
    ns_buf_put(&f, h.data, h.len);
    for (int i = 0; i < n; i++) {
        size_t count = 1;
        for (int d = 0; d < ndims[i]; d++) count *= (size_t)shapes[i][d];
        ns_buf_put(&f, data[i], 4 * count);
    }
    ns_status rc = ns_write_file_atomic(path, f.data, f.len, err);
    ns_buf_free(&h);
    ns_buf_free(&f);
    return rc;
}
