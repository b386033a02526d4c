/* state.h — the state registry: every distinct state stored once, packed,
 * addressed by a dense 32-bit id (open-addressing hash set). */
#ifndef NEXTSTATE_STATE_H
#define NEXTSTATE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"

#define NS_NO_STATE UINT32_MAX
#define NS_EMPTY_SLOT UINT64_MAX

typedef struct ns_registry {
    int nwords;
    ns_word *data; /* state i at data + i * nwords */
    uint32_t n, cap;
    /* slots: (fingerprint << 32) | id, NS_EMPTY_SLOT when empty; the
     * fingerprint is the upper half of the state's hash, which also picks the
     * slot, so probes rarely touch stored states and growth never rehashes */
    uint64_t *table;
    uint64_t tmask; /* table size - 1 (a power of two) */
} ns_registry;

/* The registry's hash of a state: the sum over its words of a mixed (word
 * index, word) pair, so the hash of a successor follows from its parent's
 * by the words an operator changes (ns_wordfx_apply) and the words of a
 * long state are mixed independently of each other. */
static inline uint64_t ns_word_hash(int w, ns_word x)
{
    return ns_hash_mix(x ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1)));
}
uint64_t ns_registry_hash(const ns_word *s, int nwords);

void ns_registry_init(ns_registry *r, int nwords);
void ns_registry_free(ns_registry *r);
/* Inserts s (copied) unless present; returns its id; *is_new tells which. */
uint32_t ns_registry_insert(ns_registry *r, const ns_word *s, bool *is_new);
/* Appends s, absent, filing its id in the empty slot `slot` of the probe
 * sequence of fingerprint fp (ns_registry_insert_hashed's insertion). */
uint32_t ns_registry_add(ns_registry *r, const ns_word *s, uint64_t fp, uint64_t slot);
/* The same as ns_registry_insert with h = ns_registry_hash(s, nwords) given;
 * inline, since in search most successors are duplicates found here. */
static inline uint32_t ns_registry_insert_hashed(ns_registry *r, const ns_word *s, uint64_t h, bool *is_new)
{
    const int nw = r->nwords;
    const uint64_t fp = h >> 32, mask = r->tmask;
    uint64_t i = fp & mask;
    for (;;) {
        uint64_t e = r->table[i];
        if (e == NS_EMPTY_SLOT) break;
        if ((e >> 32) == fp) {
            const ns_word *d = r->data + (size_t)(uint32_t)e * (size_t)nw;
            int w = 0;
            while (w < nw && d[w] == s[w]) w++;
            if (w == nw) {
                if (is_new) *is_new = false;
                return (uint32_t)e;
            }
        }
        i = (i + 1) & mask;
    }
    if (is_new) *is_new = true;
    return ns_registry_add(r, s, fp, i);
}
/* Looks s up without inserting; NS_NO_STATE when absent. */
uint32_t ns_registry_find(const ns_registry *r, const ns_word *s);
static inline const ns_word *ns_registry_get(const ns_registry *r, uint32_t id)
{
    return r->data + (size_t)id * (size_t)r->nwords;
}
/* Bytes held (for memory limits). */
size_t ns_registry_bytes(const ns_registry *r);
/* Hash of a packed state (stable: ns_hash_bytes over its words; not the
 * registry's table hash). */
uint64_t ns_state_hash(const ns_word *s, int nwords);
/* The first table slot probed for a state of registry hash h (for
 * prefetching). */
static inline const uint64_t *ns_registry_slot(const ns_registry *r, uint64_t h)
{
    return &r->table[(h >> 32) & r->tmask];
}
/* Once that slot is cached: the id it holds when that state's fingerprint
 * is h's (the likely duplicate, whose data the caller may prefetch), else
 * NS_NO_STATE. */
static inline uint32_t ns_registry_peek(const ns_registry *r, uint64_t h)
{
    uint64_t e = r->table[(h >> 32) & r->tmask];
    return e != NS_EMPTY_SLOT && (e >> 32) == (h >> 32) ? (uint32_t)e : NS_NO_STATE;
}

#endif
