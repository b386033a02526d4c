/* state.c — the state registry: packed states stored contiguously (state i at
 * data + i·nwords) and an open-addressing hash set of their 32-bit ids
 * (power-of-two table, linear probing, doubled when 70 % full).
 *
 * The hot path is ns_registry_insert() during search: one hash of the state
 * (ns_registry_hash: word-parallel, and given by the caller when it follows
 * from the parent's, ns_registry_insert_hashed), then probes that compare a
 * 32-bit fingerprint (the hash's upper half) before touching a stored state,
 * so a probe costs one cache miss in the table and, on a fingerprint match,
 * one in the state data.  The slot is fingerprint & mask, so growth moves
 * entries without rehashing states. */
#include "nextstate/core/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INIT_STATES 1024u
#define INIT_TABLE 2048u
#define HASH_SEED 0x6e6578747374ULL /* "nextst" */

/* Identical to ns_hash_bytes(s, nwords * 8, HASH_SEED) (checked by the unit
 * tests) but works on whole words, so the compiler keeps it in registers. */
static inline uint64_t hash_words(const ns_word *s, int nwords)
{
    uint64_t h = HASH_SEED ^ (0x9e3779b97f4a7c15ULL * ((uint64_t)nwords * 8u + 1u));
    for (int i = 0; i < nwords; i++) h = ns_hash_mix(h ^ s[i]) + 0x9e3779b97f4a7c15ULL;
    return ns_hash_mix(h);
}

uint64_t ns_state_hash(const ns_word *s, int nwords) { return hash_words(s, nwords); }

uint64_t ns_registry_hash(const ns_word *s, int nwords)
{
    uint64_t h = 0;
    for (int i = 0; i < nwords; i++) h += ns_word_hash(i, s[i]);
    return h;
}

static inline bool words_eq(const ns_word *a, const ns_word *b, int nwords)
{
    for (int i = 0; i < nwords; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static size_t state_words(const ns_registry *r) { return r->nwords > 0 ? (size_t)r->nwords : 1u; }

void ns_registry_init(ns_registry *r, int nwords)
{
    r->nwords = nwords;
    r->n = 0;
    r->cap = INIT_STATES;
    r->data = ns_xmalloc((size_t)r->cap * state_words(r) * sizeof(ns_word));
    r->table = ns_xmalloc((size_t)INIT_TABLE * sizeof(uint64_t));
    memset(r->table, 0xff, (size_t)INIT_TABLE * sizeof(uint64_t));
    r->tmask = INIT_TABLE - 1;
}

void ns_registry_free(ns_registry *r)
{
    free(r->data);
    free(r->table);
    r->data = NULL;
    r->table = NULL;
    r->n = r->cap = 0;
    r->tmask = 0;
}

static void grow_table(ns_registry *r)
{
    uint64_t size = (r->tmask + 1) * 2;
    uint64_t mask = size - 1;
    uint64_t *t = ns_xmalloc((size_t)size * sizeof(uint64_t));
    memset(t, 0xff, (size_t)size * sizeof(uint64_t));
    for (uint64_t k = 0; k <= r->tmask; k++) {
        uint64_t e = r->table[k];
        if (e == NS_EMPTY_SLOT) continue;
        uint64_t i = (e >> 32) & mask;
        while (t[i] != NS_EMPTY_SLOT) i = (i + 1) & mask;
        t[i] = e;
    }
    free(r->table);
    r->table = t;
    r->tmask = mask;
}

static void grow_data(ns_registry *r)
{
    if (r->cap >= NS_NO_STATE / 2 + 1) {
        if (r->cap == NS_NO_STATE - 1) {
            fprintf(stderr, "nextstate: state registry full (%u states)\n", r->cap);
            abort();
        }
        r->cap = NS_NO_STATE - 1;
    } else {
        r->cap *= 2;
    }
    r->data = ns_xrealloc(r->data, (size_t)r->cap * state_words(r) * sizeof(ns_word));
}

uint32_t ns_registry_find(const ns_registry *r, const ns_word *s)
{
    const int nw = r->nwords;
    const uint64_t mask = r->tmask;
    uint64_t fp = ns_registry_hash(s, nw) >> 32;
    uint64_t i = fp & mask;
    for (;;) {
        uint64_t e = r->table[i];
        if (e == NS_EMPTY_SLOT) return NS_NO_STATE;
        uint32_t id = (uint32_t)e;
        if ((e >> 32) == fp && words_eq(r->data + (size_t)id * (size_t)nw, s, nw)) return id;
        i = (i + 1) & mask;
    }
}

uint32_t ns_registry_insert(ns_registry *r, const ns_word *s, bool *is_new)
{
    return ns_registry_insert_hashed(r, s, ns_registry_hash(s, r->nwords), is_new);
}

uint32_t ns_registry_add(ns_registry *r, const ns_word *s, uint64_t fp, uint64_t slot)
{
    const int nw = r->nwords;
    /* append the state, then file its id (re-probing after growth) */
    if (r->n == r->cap) grow_data(r);
    uint32_t id = r->n++;
    if (nw > 0) memcpy(r->data + (size_t)id * (size_t)nw, s, (size_t)nw * sizeof(ns_word));
    r->table[slot] = (fp << 32) | id;
    if ((uint64_t)r->n * 10 > (r->tmask + 1) * 7) grow_table(r);
    return id;
}

size_t ns_registry_bytes(const ns_registry *r)
{
    return (size_t)r->cap * state_words(r) * sizeof(ns_word) +
           (size_t)(r->tmask + 1) * sizeof(uint64_t);
}
