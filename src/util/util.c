/* util.c — allocation, buffers, hashing, random numbers, files. */
#define _GNU_SOURCE /* renameat2 (Linux): folders swapped in one step */
#include "nextstate/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void oom(size_t n)
{
    fprintf(stderr, "nextstate: out of memory (allocating %zu bytes)\n", n);
    exit(NS_OUT_OF_MEMORY);
}

void *ns_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *ns_xaligned(size_t n)
{
    size_t m = (n + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of the alignment */
    void *p = aligned_alloc(64, m ? m : 64);
    if (!p) oom(n);
    return p;
}

void *ns_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *ns_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *ns_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ns_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

int ns_cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int ns_cmp_named(const void *a, const void *b)
{
    const ns_named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

int ns_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int ns_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void ns_sort_int(int *a, int n)
{
    if (n > 24) {
        qsort(a, (size_t)n, sizeof(int), ns_cmp_int);
        return;
    }
    for (int i = 1; i < n; i++) {
        int x = a[i], j = i - 1;
        while (j >= 0 && a[j] > x) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
}

void ns_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    *arr = ns_xrealloc(*arr, c * sz);
    *cap = c;
}

void ns_buf_init(ns_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
    NS_GROW(b->data, b->cap, 64);
    b->data[0] = '\0';
}

void ns_buf_free(ns_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void ns_buf_put(ns_buf *b, const void *p, size_t n)
{
    NS_GROW(b->data, b->cap, b->len + n + 1);
    if (n) memcpy(b->data + b->len, p, n); /* (p may be NULL when n is 0) */
    b->len += n;
    b->data[b->len] = '\0';
}

void ns_buf_putc(ns_buf *b, char c) { ns_buf_put(b, &c, 1); }

void ns_buf_put_le(ns_buf *b, uint64_t v, int bytes)
{
    unsigned char c[8];
    for (int i = 0; i < bytes; i++) c[i] = (unsigned char)(v >> (8 * i));
    ns_buf_put(b, c, (size_t)bytes);
}

uint64_t ns_get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
void ns_buf_puts(ns_buf *b, const char *s) { ns_buf_put(b, s, strlen(s)); }

void ns_buf_printf(ns_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    NS_GROW(b->data, b->cap, b->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

uint64_t ns_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = seed ^ (0x9e3779b97f4a7c15ULL * (n + 1));
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = ns_hash_mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    return ns_hash_mix(h ^ w ^ (n << 56));
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ns_rng_seed(ns_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ns_rng_next(ns_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ns_rng_below(ns_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = ns_rng_next(r);
    while (x >= limit);
    return x % n;
}

double ns_rng_double(ns_rng *r)
{
    return (double)(ns_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

void ns_rng_shuffle_int(ns_rng *r, int *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)ns_rng_below(r, i);
        int t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

double ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ns_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ns_cpu_with_children(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return ns_cpu_now();
    return ns_cpu_now() + (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

ns_status ns_read_file(const char *path, char **out, size_t *len, ns_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return ns_error_set(err, NS_ERR_IO, path, 0, 0, "is a directory, not a file");
    }
    ns_buf b;
    ns_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ns_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        ns_buf_free(&b);
        return ns_error_set(err, NS_ERR_IO, path, 0, 0, "read error");
    }
    *out = b.data;
    if (len) *len = b.len;
    return NS_OK;
}

ns_status ns_filemap_open(ns_filemap *m, const char *path, ns_error *err)
{
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return ns_error_set(err, NS_ERR_IO, path, 0, 0, "is a directory, not a file");
    }
    if (S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size <= (uint64_t)SIZE_MAX) {
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE; /* one call maps every page instead of a fault per 64 KB */
#endif
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, flags, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            m->data = p;
            m->len = (size_t)sb.st_size;
            m->mapped = true;
            return NS_OK;
        }
    }
    close(fd);
    char *buf;
    size_t len;
    ns_status st = ns_read_file(path, &buf, &len, err);
    if (st != NS_OK) return st;
    m->data = buf;
    m->len = len;
    return NS_OK;
}

void ns_filemap_free(ns_filemap *m)
{
    if (m->mapped) munmap(m->data, m->len);
    else free(m->data);
    memset(m, 0, sizeof *m);
}

ns_status ns_read_text_file(const char *path, char **out, size_t *len, ns_error *err)
{
    char *text;
    size_t n;
    ns_status st = ns_read_file(path, &text, &n, err);
    if (st != NS_OK) return st;
    int line = 1, col = 1;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\0') {
            free(text);
            return ns_error_set(err, NS_ERR_INPUT, path, line, col, "NUL byte in a text file");
        }
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    size_t skip = 0;
    if (n >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
        skip = 3; /* UTF-8 byte-order mark */
    if (skip) memmove(text, text + skip, n - skip + 1);
    *out = text;
    if (len) *len = n - skip;
    return NS_OK;
}

size_t ns_utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char c = u[i];
        size_t k;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, min = 0x10000;
        } else {
            return i;
        }
        unsigned cp = c & (0x3F >> k);
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (u[i + j] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (u[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += k + 1;
    }
    return n;
}

ns_status ns_write_file_atomic(const char *path, const void *data, size_t len, ns_error *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = ns_xmalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
        free(tmp);
        return NS_ERR_IO;
    }
    size_t w = fwrite(data, 1, len, f);
    /* every step runs, whatever the one before it returned */
    int bad = w != len;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        ns_error_set(err, NS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
        remove(tmp);
        free(tmp);
        return NS_ERR_IO;
    }
    free(tmp);
    return NS_OK;
}

bool ns_streq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

bool ns_same_path(const char *x, const char *y)
{
    if (!strcmp(x, y)) return true;
    struct stat sx, sy;
    return stat(x, &sx) == 0 && stat(y, &sy) == 0 && sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
}

void ns_strmap_init(ns_strmap *m)
{
    m->n = 0;
    m->mask = 15;
    m->keys = ns_xcalloc(m->mask + 1, sizeof *m->keys);
    m->vals = ns_xcalloc(m->mask + 1, sizeof *m->vals);
}

void ns_strmap_free(ns_strmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t strmap_slot(const ns_strmap *m, const char *key)
{
    size_t i = (size_t)ns_hash_bytes(key, strlen(key), 0) & m->mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & m->mask;
    return i;
}

int ns_strmap_put(ns_strmap *m, const char *key, int val)
{
    if ((m->n + 1) * 10 > (m->mask + 1) * 7) {
        ns_strmap old = *m;
        m->mask = old.mask * 2 + 1;
        m->keys = ns_xcalloc(m->mask + 1, sizeof *m->keys);
        m->vals = ns_xcalloc(m->mask + 1, sizeof *m->vals);
        for (size_t i = 0; i <= old.mask; i++)
            if (old.keys[i]) {
                size_t j = strmap_slot(m, old.keys[i]);
                m->keys[j] = old.keys[i];
                m->vals[j] = old.vals[i];
            }
        free(old.keys);
        free(old.vals);
    }
    size_t i = strmap_slot(m, key);
    if (m->keys[i]) {
        int prev = m->vals[i];
        m->vals[i] = val;
        return prev;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return -1;
}

int ns_strmap_get(const ns_strmap *m, const char *key)
{
    size_t i = strmap_slot(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

#define TUPLE_EMPTY UINT64_MAX

static void tuple_table_alloc(ns_tupleset *s)
{
    s->table = ns_xmalloc(sizeof(uint64_t) * (s->mask + 1));
    memset(s->table, 0xff, sizeof(uint64_t) * (s->mask + 1));
}

void ns_tupleset_init(ns_tupleset *s)
{
    memset(s, 0, sizeof *s);
    s->mask = 63;
    tuple_table_alloc(s);
}

void ns_tupleset_free(ns_tupleset *s)
{
    free(s->pool);
    free(s->off);
    free(s->table);
    memset(s, 0, sizeof *s);
}

static uint64_t tuple_hash(const int *t, int len)
{
    return ns_hash_bytes(t, sizeof(int) * (size_t)len, (uint64_t)len);
}

/* The slot of t (hash h): where it is, or the empty slot where it goes.  A
 * slot keeps the hash's high half beside the id, so a probe reads the tuple
 * itself only when that half matches (one cache miss, not three, on tables
 * of millions). */
static size_t tuple_slot(const ns_tupleset *s, const int *t, int len, uint64_t h)
{
    uint64_t tag = h & 0xffffffff00000000u;
    size_t i = (size_t)h & s->mask;
    for (;;) {
        uint64_t e = s->table[i];
        if (e == TUPLE_EMPTY) return i;
        if ((e & 0xffffffff00000000u) == tag) {
            const int *u = s->pool + s->off[(uint32_t)e];
            if (u[0] == len && memcmp(u + 1, t, sizeof(int) * (size_t)len) == 0) return i;
        }
        i = (i + 1) & s->mask;
    }
}

static int tuple_id(uint64_t e) { return e == TUPLE_EMPTY ? -1 : (int)(uint32_t)e; }

int ns_tupleset_find(const ns_tupleset *s, const int *t, int len)
{
    return tuple_id(s->table[tuple_slot(s, t, len, tuple_hash(t, len))]);
}

int ns_tupleset_insert(ns_tupleset *s, const int *t, int len, bool *is_new)
{
    uint64_t h = tuple_hash(t, len);
    size_t slot = tuple_slot(s, t, len, h);
    if (s->table[slot] != TUPLE_EMPTY) {
        if (is_new) *is_new = false;
        return tuple_id(s->table[slot]);
    }
    if (is_new) *is_new = true;
    NS_GROW(s->pool, s->pool_cap, s->pool_len + (size_t)len + 1);
    NS_GROW(s->off, s->off_cap, (size_t)s->n + 1);
    s->off[s->n] = s->pool_len;
    s->pool[s->pool_len] = len;
    memcpy(s->pool + s->pool_len + 1, t, sizeof(int) * (size_t)len);
    s->pool_len += (size_t)len + 1;
    int id = s->n++;
    s->table[slot] = (h & 0xffffffff00000000u) | (uint32_t)id;
    if ((size_t)s->n * 10 > (s->mask + 1) * 7) {
        free(s->table);
        s->mask = s->mask * 2 + 1;
        tuple_table_alloc(s);
        for (int i = 0; i < s->n; i++) {
            int l;
            const int *u = ns_tupleset_get(s, i, &l);
            uint64_t hu = tuple_hash(u, l);
            size_t j = (size_t)hu & s->mask; /* distinct tuples: the first empty slot */
            while (s->table[j] != TUPLE_EMPTY) j = (j + 1) & s->mask;
            s->table[j] = (hu & 0xffffffff00000000u) | (uint32_t)i;
        }
    }
    return id;
}

void ns_progress_init(ns_progress *p, bool want, const char *label)
{
    p->on = want && isatty(2);
    p->last = 0;
    p->start = ns_now();
    p->label = label;
}

void ns_progress_update(ns_progress *p, long done, long total, const char *what)
{
    if (!p->on) return;
    double now = ns_now();
    if (now - p->last < 0.1 && done < total) return;
    p->last = now;
    fprintf(stderr, "\r\033[K%s [%ld/%ld] %.1fs %s", p->label, done, total, now - p->start, what ? what : "");
    fflush(stderr);
}

void ns_progress_done(ns_progress *p)
{
    if (!p->on) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

ns_status ns_mkdir_p(const char *path, ns_error *err)
{
    char *buf = ns_xstrdup(path);
    for (char *q = buf + 1;; q++) {
        if (*q == '/' || *q == '\0') {
            char c = *q;
            *q = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                ns_error_set(err, NS_ERR_IO, buf, 0, 0, "cannot create directory: %s", strerror(errno));
                free(buf);
                return NS_ERR_IO;
            }
            *q = c;
            if (c == '\0') break;
        }
    }
    free(buf);
    return NS_OK;
}

/* ---- folder outputs replaced as a unit ------------------------------------ */

void ns_remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                size_t n = strlen(path) + strlen(e->d_name) + 2;
                char *kid = ns_xmalloc(n);
                snprintf(kid, n, "%s/%s", path, e->d_name);
                ns_remove_tree(kid);
                free(kid);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static char *dir_sibling(const char *dir, const char *tag)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--; /* "ds/" names the folder ds */
    size_t m = n + strlen(tag) + 16;
    char *s = ns_xmalloc(m);
    snprintf(s, m, "%.*s.%s.XXXXXX", (int)n, dir, tag);
    return s;
}

ns_status ns_dir_stage(const char *dir, char **tmp, ns_error *err)
{
    *tmp = NULL;
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return ns_error_set(err, NS_ERR_IO, dir, 0, 0, "exists and is not a folder");
    char *parent = ns_xstrdup(dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    ns_status st = NS_OK;
    if (slash && slash != parent) {
        *slash = '\0';
        st = ns_mkdir_p(parent, err);
    }
    free(parent);
    if (st != NS_OK) return st;
    char *t = dir_sibling(dir, "tmp");
    if (!mkdtemp(t)) {
        ns_error_set(err, NS_ERR_IO, dir, 0, 0, "cannot create a folder beside it: %s", strerror(errno));
        free(t);
        return NS_ERR_IO;
    }
    chmod(t, 0777 & ~(mode_t)0022); /* mkdtemp makes 0700; a finished folder is an ordinary one */
    *tmp = t;
    return NS_OK;
}

ns_status ns_dir_commit(const char *dir, char *tmp, ns_error *err)
{
    struct stat sb;
    char *old = NULL;
    if (stat(dir, &sb) == 0) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
        /* one atomic swap where the file system has it: no moment without dir */
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
            ns_remove_tree(tmp); /* now the previous folder */
            free(tmp);
            return NS_OK;
        }
#endif
        old = dir_sibling(dir, "old");
        if (!mkdtemp(old) || rmdir(old) != 0 || rename(dir, old) != 0) {
            ns_error_set(err, NS_ERR_IO, dir, 0, 0, "cannot move the previous folder aside: %s", strerror(errno));
            ns_remove_tree(tmp);
            free(tmp);
            free(old);
            return NS_ERR_IO;
        }
    }
    if (rename(tmp, dir) != 0) {
        ns_error_set(err, NS_ERR_IO, dir, 0, 0, "cannot move the new folder in: %s", strerror(errno));
        if (old) rename(old, dir); /* put the previous one back */
        ns_remove_tree(tmp);
        free(tmp);
        free(old);
        return NS_ERR_IO;
    }
    if (old) ns_remove_tree(old);
    free(old);
    free(tmp);
    return NS_OK;
}

void ns_dir_discard(char *tmp)
{
    if (!tmp) return;
    ns_remove_tree(tmp);
    free(tmp);
}
