/* search.c — breadth-first search, A* and greedy best-first search.
 *
 * All three are eager searches over the state registry with full duplicate
 * detection.  Per-state data lives in arrays indexed by registry id, grown
 * with the registry: parent id and creating operator for all; g, h and a
 * closed flag for A* and GBFS.  A plan is extracted by walking parents back
 * from the goal; its cost is the sum of its operators' costs.
 *
 * BFS: the registry itself is the FIFO — states get ids in the order they
 *   are first generated, so expanding ids 0, 1, 2, … is breadth-first.  The
 *   goal test happens at generation.  The plan has the fewest steps, which is
 *   optimal for unit costs; with action costs BFS is NOT cost-optimal (use A*).
 * A*: f = g + h, ties broken on lower h, then first in first out.  The goal
 *   test happens at expansion.  A cheaper path to an open state updates it and
 *   queues it again; a cheaper path to a closed state reopens it (this never
 *   happens with a consistent heuristic — blind, h^max — and is what keeps A*
 *   optimal with an admissible but inconsistent one such as LM-cut).  Stale
 *   queue entries are skipped on removal: a state's newest entry always has
 *   the lowest key, so any entry met while the state is closed is stale.
 * GBFS: ordered by h, FIFO among ties, goal test at expansion.  A cheaper
 *   path to a known state updates its parent and g (no reopening), which
 *   improves plan cost without changing the search order.
 * States whose h is NS_H_INF are dead ends and are never queued; exhausting
 *   the queue therefore proves unsolvability for all three algorithms.
 *
 * GBFS with preferred operators (eager): the preferred operators of a state
 *   come from the evaluation that computed its h, when it was generated: each
 *   evaluated state's helpful actions are kept in an arena of operator ids
 *   (states are evaluated in id order, right after insertion, so a state's
 *   list runs from its start offset to the next state's; nothing is kept for
 *   a dead end), and expanding the state reads them back instead of
 *   evaluating it again.  The evaluator's result must be a function of the
 *   state alone (h^FF is), so the search is the same as with a second
 *   evaluation at expansion — which is still what happens to states
 *   evaluated after the arena reached opts.pref_cache bytes (or 2^32 ids).
 *   preferred_fn filters the kept list at expansion, as before.  The arena
 *   and its offsets count in the memory limit.
 *
 * Statistics follow Fast Downward: `expanded` counts states taken from the
 * open list for expansion (for A* and GBFS the goal state, popped last, is
 * counted too), `generated` counts every successor produced (duplicates
 * included), `evaluated` counts the states evaluated (the initial state and
 * each new state, once each; for BFS, the distinct states reached) — FD's
 * "Evaluated N states" and the unit of max_evaluated.  Eager GBFS with
 * preferred operators makes exactly that many heuristic evaluations, except
 * for the second evaluation at expansion of a state whose preferred
 * operators were not kept (opts.pref_cache), which is not counted: the
 * counts and budgets do not depend on the cache.
 *
 * LAZY (deferred evaluation, LAMA): see search.h.  Entries are (parent,
 *   operator) pairs in an entry array; the open lists hold entry indices.
 *   Taking one generates its state; a state already known is skipped (greedy:
 *   no reopening), a new one is evaluated once — h and the preferred
 *   operators together — and, unless a dead end or a goal, its successors
 *   are queued with its h.  `expanded` counts evaluated non-goal states whose
 *   successors were queued (plus the goal), `evaluated` evaluations.
 *
 * Limits: the CPU clock is read after every k units of work (expansions and
 * evaluations), k adapted so that reads are 0.5–4 ms apart: one LM-cut
 * evaluation on a large task can take tens of ms, so a fixed count of states
 * overshoots the limit many times over (issue #14, D3); memory
 * (registry, per-state arrays, open list, heuristic scratch, buffers) is
 * compared with the limit at every expansion. */
#include "nextstate/core/search.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/core/lama.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/succorder.h"
#include "nextstate/core/wordfx.h"

/* Successors are generated in batches; each successor's hash-table slot is
 * prefetched before any of the batch is looked up, then the state (and
 * per-state data) in that slot when its fingerprint matches, which hides
 * most of the cache misses that dominate blind search on large state
 * spaces.  A successor's registry hash follows from its parent's by the
 * words its operator changes (wordfx.h). */
#define BATCH 32

/* ---- open list: FIFO buckets per distinct 64-bit key, min-heap of keys ----
 * Distinct keys are few (f·h pairs), so pushes are a hash lookup (usually a
 * hit on the last key used) plus a ring-buffer append, and pops a ring-buffer
 * removal; the heap moves only when a key's bucket empties or fills. */
typedef struct bucket {
    uint64_t key;
    uint32_t *a; /* ring buffer, capacity a power of two (or 0) */
    uint32_t head, n, cap;
    int in_heap;
} bucket;

typedef struct openlist {
    bucket *b;
    size_t nb, capb;
    int *map; /* open addressing: key -> bucket index, -1 empty */
    size_t mapmask;
    int *heap; /* bucket indices with n > 0, ordered by key */
    size_t nheap, capheap;
    size_t size; /* entries */
    size_t ring_bytes;
    int last_b; /* bucket of the last push (cache) */
} openlist;

static void ol_init(openlist *q)
{
    memset(q, 0, sizeof *q);
    q->mapmask = 63;
    q->map = ns_xmalloc((q->mapmask + 1) * sizeof(int));
    memset(q->map, 0xff, (q->mapmask + 1) * sizeof(int));
    q->last_b = -1;
}

static void ol_free(openlist *q)
{
    for (size_t i = 0; i < q->nb; i++) free(q->b[i].a);
    free(q->b);
    free(q->map);
    free(q->heap);
}

static size_t ol_bytes(const openlist *q)
{
    return q->capb * sizeof(bucket) + (q->mapmask + 1) * sizeof(int) +
           q->capheap * sizeof(int) + q->ring_bytes;
}

static inline size_t ol_slot(uint64_t key, size_t mask) { return (size_t)ns_hash_mix(key) & mask; }

static void ol_map_grow(openlist *q)
{
    size_t mask = q->mapmask * 2 + 1;
    int *m = ns_xmalloc((mask + 1) * sizeof(int));
    memset(m, 0xff, (mask + 1) * sizeof(int));
    for (size_t i = 0; i < q->nb; i++) {
        size_t s = ol_slot(q->b[i].key, mask);
        while (m[s] >= 0) s = (s + 1) & mask;
        m[s] = (int)i;
    }
    free(q->map);
    q->map = m;
    q->mapmask = mask;
}

static int ol_bucket(openlist *q, uint64_t key)
{
    size_t s = ol_slot(key, q->mapmask);
    for (;;) {
        int i = q->map[s];
        if (i < 0) break;
        if (q->b[i].key == key) return i;
        s = (s + 1) & q->mapmask;
    }
    NS_GROW(q->b, q->capb, q->nb + 1);
    int i = (int)q->nb++;
    memset(&q->b[i], 0, sizeof q->b[i]);
    q->b[i].key = key;
    q->map[s] = i;
    if (q->nb * 2 > q->mapmask + 1) ol_map_grow(q);
    return i;
}

static inline bool heap_less(const openlist *q, int x, int y) { return q->b[x].key < q->b[y].key; }

static void heap_push(openlist *q, int bi)
{
    NS_GROW(q->heap, q->capheap, q->nheap + 1);
    size_t i = q->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(q, bi, q->heap[p])) break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = bi;
}

static void heap_pop(openlist *q)
{
    int x = q->heap[--q->nheap];
    size_t n = q->nheap, i = 0;
    if (n == 0) return;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(q, q->heap[c + 1], q->heap[c])) c++;
        if (!heap_less(q, q->heap[c], x)) break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    q->heap[i] = x;
}

static void ring_grow(openlist *q, bucket *b)
{
    uint32_t cap = b->cap ? b->cap * 2 : 16;
    uint32_t *a = ns_xmalloc((size_t)cap * sizeof(uint32_t));
    for (uint32_t k = 0; k < b->n; k++) a[k] = b->a[(b->head + k) & (b->cap - 1)];
    free(b->a);
    q->ring_bytes += (size_t)(cap - b->cap) * sizeof(uint32_t);
    b->a = a;
    b->cap = cap;
    b->head = 0;
}

static inline void ol_push(openlist *q, uint64_t key, uint32_t id)
{
    int bi = q->last_b;
    if (bi < 0 || q->b[bi].key != key) q->last_b = bi = ol_bucket(q, key);
    bucket *b = &q->b[bi];
    if (b->n == b->cap) ring_grow(q, b);
    b->a[(b->head + b->n) & (b->cap - 1)] = id;
    b->n++;
    q->size++;
    if (!b->in_heap) {
        b->in_heap = 1;
        heap_push(q, bi);
    }
}

/* Removes the first entry of the minimal key; q->size > 0. */
static inline uint32_t ol_pop(openlist *q)
{
    int bi = q->heap[0];
    bucket *b = &q->b[bi];
    uint32_t id = b->a[b->head];
    b->head = (b->head + 1) & (b->cap - 1);
    b->n--;
    q->size--;
    if (b->n == 0) {
        b->in_heap = 0;
        b->head = 0;
        heap_pop(q);
        if (b->cap > 4096) { /* drained layer: give the memory back */
            q->ring_bytes -= (size_t)b->cap * sizeof(uint32_t);
            free(b->a);
            b->a = NULL;
            b->cap = 0;
        }
    }
    return id;
}

/* ---- per-state data ----
 * links (parent, operator) for every algorithm; g, h and a closed flag for
 * A* and GBFS only.  A dead end is a state with h == NS_H_INF. */
typedef struct plink {
    uint32_t parent;
    int op;
} plink;

typedef struct gh {
    int g;
    int h;
} gh;

typedef struct search {
    const ns_task *t;
    const ns_search_opts *o;
    ns_search_result *r;
    ns_registry reg;
    ns_succgen sg;
    const ns_evaluator *ev; /* the heuristic object (o->evaluator or own) */
    ns_evaluator own;
    size_t heur_bytes;
    plink *links;
    gh *gh;          /* NULL for BFS */
    uint8_t *closed; /* NULL for BFS; zero-filled on growth */
    size_t ncap;
    openlist open;
    openlist popen; /* GBFS preferred-operator list (used when pref is set) */
    int *pref;      /* helpful actions of the state being expanded, or NULL */
    /* eager GBFS with preferred operators: each evaluated state's preferred
       operators, parena[poff[id] .. end), end = poff[id + 1] or pn for the
       last state, as uint16_t when the task has at most 65536 operators
       (pw = 2), else int32_t (pw = 4); kept for ids < pkept_below only
       (poff NULL: none kept) */
    void *parena;
    size_t pn, pcap, pmax; /* entries used, allocated, allowed (opts.pref_cache) */
    size_t pw;
    uint32_t *poff;
    uint32_t pkept_below;
    uint32_t *pmark, pstamp; /* op -> pstamp when preferred in the state being expanded */
    ns_succorder order; /* GBFS and lazy: successor order (succorder.h) */
    int *ops;       /* applicable operators (task->nops) */
    ns_word *state; /* copy of the state being expanded */
    ns_word *succ;  /* BATCH successor states */
    uint64_t hstate;         /* registry hash of s->state */
    uint64_t hsucc[BATCH];   /* registry hashes of s->succ */
    ns_wordfx fx;
    double start, cpu_start; /* wall clock for reports, CPU time for the limit */
    long work, next_check, check_every; /* clock reads: see over_time */
    double last_check;
} search;

static inline void ensure_nodes(search *s, uint32_t id)
{
    if (id < s->ncap) return;
    size_t cap = s->ncap ? s->ncap * 2 : 1024;
    while (cap <= id) cap *= 2;
    s->links = ns_xrealloc(s->links, cap * sizeof(plink));
    if (s->gh) {
        s->gh = ns_xrealloc(s->gh, cap * sizeof(gh));
        s->closed = ns_xrealloc(s->closed, cap);
        memset(s->closed + s->ncap, 0, cap - s->ncap);
    }
    if (s->poff) s->poff = ns_xrealloc(s->poff, cap * sizeof(uint32_t));
    s->ncap = cap;
}

static size_t search_bytes(const search *s)
{
    size_t per_state = sizeof(plink) + (s->gh ? sizeof(gh) + 1 : 0) + (s->poff ? sizeof(uint32_t) : 0);
    return ns_registry_bytes(&s->reg) + s->ncap * per_state + ol_bytes(&s->open) + ol_bytes(&s->popen) +
           s->pcap * s->pw +
           s->heur_bytes + (size_t)s->t->nops * sizeof(int) + ns_wordfx_bytes(&s->fx) +
           (BATCH + 1) * (size_t)s->t->nwords * sizeof(ns_word) +
           (size_t)s->t->nops * ((s->pmark ? sizeof(uint32_t) : 0) + (s->order.rank ? 2 * sizeof(int) : 0));
}

static inline bool over_memory(const search *s)
{
    return s->o->memory_limit > 0 && search_bytes(s) > s->o->memory_limit;
}

/* Counts one unit of work (an expansion or an evaluation) and every
 * check_every units reads the CPU clock (and refreshes the heuristic's byte
 * count); check_every doubles while reads are under 0.5 ms apart and drops
 * to a quarter when they are over 4 ms apart, so the limit is overshot by a
 * few ms plus at most one unit of work. */
static inline bool over_time(search *s)
{
    if (++s->work < s->next_check) return false;
    if (s->ev && s->ev->bytes) s->heur_bytes = s->ev->bytes(s->ev->ctx);
    double now = ns_cpu_now(), dt = now - s->last_check;
    s->last_check = now;
    if (dt < 5e-4 && s->check_every < (1L << 20)) s->check_every *= 2;
    else if (dt > 4e-3 && s->check_every > 1) s->check_every = s->check_every / 4 > 0 ? s->check_every / 4 : 1;
    s->next_check = s->work + s->check_every;
    return s->o->time_limit > 0 && now - s->cpu_start > s->o->time_limit;
}

/* Whether the set-up so far (successor generator, effect masks, heuristic,
 * successor order: seconds each on tasks of millions of operators) has used
 * the time limit: read between its phases, so a search with no time left
 * stops after one phase, not after all of them and its first expansion. */
static bool setup_spent(const search *s)
{
    return s->o->time_limit > 0 && ns_cpu_now() - s->cpu_start > s->o->time_limit;
}

static inline bool over_budget(const search *s, const ns_search_result *r)
{
    return (s->o->max_evaluated > 0 && r->evaluated >= s->o->max_evaluated) ||
           (s->o->max_work > 0 && s->ev->work && s->ev->work(s->ev->ctx) >= s->o->max_work);
}

static inline int evaluate(search *s, const ns_word *st, int *pref, int *npref)
{
    return s->ev->eval(s->ev->ctx, st, pref, npref);
}

static ns_status extract_plan(search *s, uint32_t goal)
{
    int len = 0;
    for (uint32_t id = goal; id != 0; id = s->links[id].parent) len++;
    s->r->plan = ns_xmalloc((size_t)(len > 0 ? len : 1) * sizeof(int));
    s->r->plan_len = len;
    long cost = 0;
    int k = len;
    for (uint32_t id = goal; id != 0; id = s->links[id].parent) {
        int op = s->links[id].op;
        s->r->plan[--k] = op;
        cost += s->t->ops[op].cost;
    }
    s->r->plan_cost = cost;
    return NS_OK;
}

/* Writes the successors of s->state by ops[k0 .. k1) to s->succ and their
 * hashes to s->hsucc, prefetches their hash-table slots, then the state and
 * per-state data each slot points to when it is the likely duplicate. */
static inline void gen_batch(search *s, int k0, int k1)
{
    const int nw = s->t->nwords;
    for (int k = k0; k < k1; k++) {
        ns_word *out = s->succ + (size_t)(k - k0) * (size_t)nw;
        uint64_t h = ns_wordfx_apply(&s->fx, s->ops[k], s->state, s->hstate, out);
        s->hsucc[k - k0] = h;
        __builtin_prefetch(ns_registry_slot(&s->reg, h));
    }
    for (int k = k0; k < k1; k++) {
        uint32_t id = ns_registry_peek(&s->reg, s->hsucc[k - k0]);
        if (id == NS_NO_STATE) continue;
        __builtin_prefetch(ns_registry_get(&s->reg, id));
        if (s->gh && id < s->ncap) __builtin_prefetch(&s->gh[id]);
    }
}

/* Makes state `id` the one being expanded (s->state, s->hstate). */
static inline void load_state(search *s, uint32_t id)
{
    memcpy(s->state, ns_registry_get(&s->reg, id), (size_t)s->t->nwords * sizeof(ns_word));
    s->hstate = ns_registry_hash(s->state, s->t->nwords);
}

static ns_status run_bfs(search *s)
{
    const ns_task *t = s->t;
    ns_search_result *r = s->r;
    const int nw = t->nwords;
    uint32_t id0 = ns_registry_insert(&s->reg, t->init, NULL);
    ensure_nodes(s, id0);
    s->links[id0] = (plink){NS_NO_STATE, -1};
    r->evaluated = 1;
    if (ns_task_is_goal(t, t->init)) return extract_plan(s, id0);
    for (uint32_t cur = 0; cur < s->reg.n; cur++) {
        if (over_memory(s)) return NS_OUT_OF_MEMORY;
        if (over_time(s)) return NS_OUT_OF_TIME;
        if (over_budget(s, r)) return NS_INCOMPLETE;
        load_state(s, cur);
        int nops = ns_succgen_applicable(&s->sg, s->state, s->ops);
        r->expanded++;
        for (int k0 = 0; k0 < nops; k0 += BATCH) {
            int k1 = nops - k0 < BATCH ? nops : k0 + BATCH;
            gen_batch(s, k0, k1);
            for (int k = k0; k < k1; k++) {
                const ns_word *succ = s->succ + (size_t)(k - k0) * (size_t)nw;
                r->generated++;
                bool is_new;
                uint32_t id = ns_registry_insert_hashed(&s->reg, succ, s->hsucc[k - k0], &is_new);
                if (!is_new) continue;
                ensure_nodes(s, id);
                s->links[id] = (plink){cur, s->ops[k]};
                r->evaluated++;
                if (ns_task_is_goal(t, succ)) return extract_plan(s, id);
            }
        }
    }
    return NS_UNSOLVABLE;
}

/* GBFS and lazy search: the state's applicable operators into s->ops in
 * successor order (succorder.h), its preferred ones s->pref[0..npref)
 * marked in s->pmark; returns their number. */
static int greedy_successors(search *s, int npref)
{
    int nops = ns_succgen_applicable(&s->sg, s->state, s->ops);
    ns_succorder_sort(&s->order, s->ops, nops);
    if (s->pref) {
        if (++s->pstamp == 0) {
            memset(s->pmark, 0, (size_t)s->t->nops * sizeof(uint32_t));
            s->pstamp = 1;
        }
        for (int k = 0; k < npref; k++) s->pmark[s->pref[k]] = s->pstamp;
    }
    return nops;
}

/* Eager GBFS with preferred operators: evaluates state `id` (just inserted,
 * every lower id evaluated already), keeping its preferred operators while
 * the arena has room (s->pref is the scratch: the preferred operators of
 * the state being expanded are marked by then); returns h. */
static int evaluate_keep(search *s, uint32_t id, const ns_word *st)
{
    if (id >= s->pkept_below) return evaluate(s, st, NULL, NULL);
    int n = 0;
    int h = evaluate(s, st, s->pref, &n);
    if (h == NS_H_INF) n = 0; /* nothing for a dead end */
    if (s->pn + (size_t)n > s->pcap) {
        size_t cap = s->pcap ? 2 * s->pcap : 1024;
        if (cap < s->pn + (size_t)n) cap = s->pn + (size_t)n;
        if (cap > s->pmax) cap = s->pmax;
        if (cap < s->pn + (size_t)n) { /* full: this state and later ones are evaluated again */
            s->pkept_below = id;
            return h;
        }
        s->parena = ns_xrealloc(s->parena, cap * s->pw);
        s->pcap = cap;
    }
    s->poff[id] = (uint32_t)s->pn;
    if (s->pw == 2) {
        uint16_t *a = (uint16_t *)s->parena + s->pn;
        for (int k = 0; k < n; k++) a[k] = (uint16_t)s->pref[k];
    } else if (n > 0) {
        memcpy((int32_t *)s->parena + s->pn, s->pref, (size_t)n * sizeof(int32_t));
    }
    s->pn += (size_t)n;
    return h;
}

/* The kept preferred operators of state `id` (< s->pkept_below) into ops;
 * returns their number. */
static inline int kept_preferred(const search *s, uint32_t id, int *ops)
{
    size_t b = s->poff[id], e = id + 1 < s->reg.n && id + 1 < s->pkept_below ? s->poff[id + 1] : s->pn;
    int n = (int)(e - b);
    if (s->pw == 2) {
        const uint16_t *a = (const uint16_t *)s->parena + b;
        for (int k = 0; k < n; k++) ops[k] = a[k];
    } else if (n > 0) {
        memcpy(ops, (const int32_t *)s->parena + b, (size_t)n * sizeof(int32_t));
    }
    return n;
}

/* Over the memory limit?  The kept preferred operators go first: without
 * them the search goes on as before, evaluating expanded states again. */
static bool out_of_memory(search *s)
{
    if (!over_memory(s)) return false;
    if (!s->poff) return true;
    free(s->parena);
    free(s->poff);
    s->parena = NULL;
    s->poff = NULL;
    s->pn = s->pcap = 0;
    s->pkept_below = 0;
    return over_memory(s);
}

static inline bool is_preferred(const search *s, int op) { return s->pref && s->pmark[op] == s->pstamp; }

static inline uint64_t astar_key(int g, int h)
{
    return (uint64_t)((int64_t)g + h) << 32 | (uint32_t)h;
}

/* A* (astar = true) or greedy best-first search. */
static ns_status run_best_first(search *s, bool astar)
{
    const ns_task *t = s->t;
    ns_search_result *r = s->r;
    const int nw = t->nwords;

    uint32_t id0 = ns_registry_insert(&s->reg, t->init, NULL);
    ensure_nodes(s, id0);
    int h0 = s->poff ? evaluate_keep(s, id0, t->init) : evaluate(s, t->init, NULL, NULL);
    r->evaluated = 1;
    r->init_h = h0;
    if (h0 == NS_H_INF) return NS_UNSOLVABLE;
    s->links[id0] = (plink){NS_NO_STATE, -1};
    s->gh[id0] = (gh){0, h0};
    ol_push(&s->open, astar ? astar_key(0, h0) : (uint64_t)h0, id0);
    /* preferred operators: two lists taken by lowest priority, the chosen
     * one's priority rising by one; a new best h lowers the preferred list's
     * priority by 1000 (Fast Downward's alternation with boosting) */
    long prio[2] = {0, 0};
    int best_h = h0;

    while (s->open.size || s->popen.size) {
        int which = !s->pref || !s->popen.size ? 0 : !s->open.size ? 1 : prio[1] < prio[0];
        prio[which]++;
        uint32_t cur = ol_pop(which ? &s->popen : &s->open);
        if (s->closed[cur]) continue; /* a stale entry */
        s->closed[cur] = 1;
        if (out_of_memory(s)) return NS_OUT_OF_MEMORY;
        if (over_time(s)) return NS_OUT_OF_TIME;
        if (over_budget(s, r)) return NS_INCOMPLETE;
        r->expanded++;
        load_state(s, cur);
        if (ns_task_is_goal(t, s->state)) return extract_plan(s, cur);
        const int g = s->gh[cur].g;
        int npref = 0;
        /* the preferred operators of the state being expanded: kept from its
           evaluation at generation, or (not kept) from evaluating it again */
        if (s->pref && cur < s->pkept_below) npref = kept_preferred(s, cur, s->pref);
        else if (s->pref && evaluate(s, s->state, s->pref, &npref) == NS_H_INF) npref = 0;
        if (s->pref && s->o->preferred_fn && npref > 0)
            npref = s->o->preferred_fn(s->o->preferred_ctx, s->state, s->pref, npref, s->pref);
        /* A*: operator-id order; GBFS: successor order (succorder.h) */
        int nops = astar ? ns_succgen_applicable(&s->sg, s->state, s->ops) : greedy_successors(s, npref);
        for (int k = 0; k < nops; k++) {
            if (k % BATCH == 0) gen_batch(s, k, nops - k < BATCH ? nops : k + BATCH);
            const ns_word *succ = s->succ + (size_t)(k % BATCH) * (size_t)nw;
            int op = s->ops[k];
            r->generated++;
            int ng = g + t->ops[op].cost;
            bool is_new;
            uint32_t id = ns_registry_insert_hashed(&s->reg, succ, s->hsucc[k % BATCH], &is_new);
            if (is_new) {
                ensure_nodes(s, id);
                int h = s->poff ? evaluate_keep(s, id, succ) : evaluate(s, succ, NULL, NULL);
                r->evaluated++;
                if (over_time(s)) return NS_OUT_OF_TIME;
                s->links[id] = (plink){cur, op};
                s->gh[id] = (gh){ng, h};
                if (h == NS_H_INF) continue; /* dead end: never queued */
                ol_push(&s->open, astar ? astar_key(ng, h) : (uint64_t)h, id);
                if (s->pref) {
                    if (is_preferred(s, op)) ol_push(&s->popen, (uint64_t)h, id);
                    if (h < best_h) {
                        best_h = h;
                        prio[1] -= 1000;
                    }
                }
            } else if (ng < s->gh[id].g && s->gh[id].h != NS_H_INF) {
                s->links[id] = (plink){cur, op};
                s->gh[id].g = ng;
                if (astar) {
                    s->closed[id] = 0; /* reopens a closed state */
                    ol_push(&s->open, astar_key(ng, s->gh[id].h), id);
                }
            }
        }
    }
    return NS_UNSOLVABLE;
}

/* ---- lazy greedy best-first search ---- */
typedef struct lentry {
    uint32_t parent;
    int op;
} lentry;

typedef struct lentries {
    lentry *v;
    size_t n, cap;
} lentries;

static ns_status run_lazy(search *s)
{
    const ns_task *t = s->t;
    ns_search_result *r = s->r;
    const int nw = t->nwords;
    const size_t wbytes = (size_t)nw * sizeof(ns_word);
    lentries E = {0};
    ns_status st = NS_UNSOLVABLE;
    long prio[2] = {0, 0};
    int best_h = NS_H_INF;
    uint32_t cur = ns_registry_insert(&s->reg, t->init, NULL);
    ensure_nodes(s, cur);
    s->links[cur] = (plink){NS_NO_STATE, -1};
    s->gh[cur] = (gh){0, 0};
    memcpy(s->state, t->init, wbytes);
    for (;;) {
        /* s->state is the new state `cur`, its link and g set: evaluate it */
        int npref = 0;
        int h = evaluate(s, s->state, s->pref, &npref);
        r->evaluated++;
        if (r->evaluated == 1) r->init_h = h;
        s->gh[cur].h = h;
        s->closed[cur] = 1;
        if (h != NS_H_INF) {
            if (ns_task_is_goal(t, s->state)) {
                r->expanded++;
                st = extract_plan(s, cur);
                break;
            }
            if (s->pref && s->o->preferred_fn && npref > 0)
                npref = s->o->preferred_fn(s->o->preferred_ctx, s->state, s->pref, npref, s->pref);
            if (s->pref && h < best_h) {
                if (best_h != NS_H_INF) prio[1] -= 1000;
                best_h = h;
            }
            r->expanded++;
            int nops = greedy_successors(s, npref);
            NS_GROW(E.v, E.cap, E.n + (size_t)nops);
            for (int k = 0; k < nops; k++) {
                int op = s->ops[k];
                uint32_t e = (uint32_t)E.n;
                E.v[E.n++] = (lentry){cur, op};
                ol_push(&s->open, (uint64_t)h, e);
                if (is_preferred(s, op)) ol_push(&s->popen, (uint64_t)h, e);
            }
            r->generated += nops;
        }
        if (over_memory(s) || (s->o->memory_limit && E.cap * sizeof(lentry) > s->o->memory_limit)) {
            st = NS_OUT_OF_MEMORY;
            break;
        }
        if (over_time(s)) {
            st = NS_OUT_OF_TIME;
            break;
        }
        if (over_budget(s, r)) {
            st = NS_INCOMPLETE;
            break;
        }
        /* the next new state from the open lists */
        bool found = false;
        while (s->open.size || s->popen.size) {
            int which = !s->pref || !s->popen.size ? 0 : !s->open.size ? 1 : prio[1] < prio[0];
            prio[which]++;
            lentry le = E.v[ol_pop(which ? &s->popen : &s->open)];
            ns_task_apply(t, le.op, ns_registry_get(&s->reg, le.parent), s->state);
            int ng = s->gh[le.parent].g + t->ops[le.op].cost;
            bool is_new;
            uint32_t id = ns_registry_insert(&s->reg, s->state, &is_new);
            if (!is_new) {
                if (ng < s->gh[id].g && s->gh[id].h != NS_H_INF) { /* a cheaper path: better plan, same order */
                    s->links[id] = (plink){le.parent, le.op};
                    s->gh[id].g = ng;
                }
                continue;
            }
            ensure_nodes(s, id);
            s->links[id] = (plink){le.parent, le.op};
            s->gh[id] = (gh){ng, 0};
            cur = id;
            found = true;
            break;
        }
        if (!found) break;
    }
    free(E.v);
    return st;
}

long ns_search_setup_work(const ns_task *t)
{
    long n = t->natoms;
    for (int o = 0; o < t->nops; o++) n += 1L + t->ops[o].npre + t->ops[o].nadd + t->ops[o].ndel;
    return NS_SEARCH_SETUP_WORK * n;
}

void ns_search_opts_default(ns_search_opts *o)
{
    o->algo = NS_SEARCH_ASTAR;
    o->heuristic = NS_H_LMCUT;
    o->time_limit = 0;
    o->max_evaluated = 0;
    o->max_work = 0;
    o->memory_limit = 0;
    o->prune_irrelevant = true;
    o->preferred = true;
    o->preferred_fn = NULL;
    o->preferred_ctx = NULL;
    o->pref_cache = SIZE_MAX;
    o->last_supporter = false;
    o->evaluator = NULL;
    o->extra = NULL;
}

ns_status ns_search(const ns_task *t, const ns_search_opts *o, ns_search_result *r)
{
    if (o->algo == NS_SEARCH_LAMA) return ns_lama_search(t, o, r);
    memset(r, 0, sizeof *r);
    r->init_h = -1;
    search s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.o = o;
    s.r = r;
    s.start = ns_now();
    s.cpu_start = ns_cpu_now();
    s.next_check = 0;
    s.check_every = 1;
    s.last_check = s.cpu_start;
    if (t->goal_impossible) {
        r->status = NS_UNSOLVABLE;
        r->seconds = ns_now() - s.start;
        return r->status;
    }
    ns_registry_init(&s.reg, t->nwords);
    bool *keep = NULL;
    if (o->prune_irrelevant) {
        keep = ns_xmalloc(sizeof(bool) * ((size_t)t->nops + 1));
        ns_task_relevant_ops(t, keep);
    }
    ns_succgen_init_subset(&s.sg, t, keep);
    free(keep);
    ol_init(&s.open);
    ol_init(&s.popen);
    s.ops = ns_xmalloc(((size_t)t->nops + 1) * sizeof(int));
    s.state = ns_xmalloc(((size_t)t->nwords + 1) * sizeof(ns_word));
    s.succ = ns_xmalloc(((size_t)t->nwords + 1) * BATCH * sizeof(ns_word));
    ns_wordfx_init(&s.fx, t);
    ns_status st = NS_OUT_OF_TIME;
    if (setup_spent(&s)) {
        /* nothing more set up */
    } else if (o->algo == NS_SEARCH_BFS) {
        st = run_bfs(&s);
    } else {
        if (o->evaluator) {
            s.ev = o->evaluator;
        } else {
            ns_evaluator_classical_ties(&s.own, t, o->heuristic, o->last_supporter);
            s.ev = &s.own;
        }
        s.gh = ns_xmalloc(sizeof(gh)); /* marks best-first; grown by ensure_nodes */
        s.closed = ns_xmalloc(1);
        s.heur_bytes = s.ev->bytes ? s.ev->bytes(s.ev->ctx) : 0;
        /* preferred operators: eager GBFS with h^FF or an evaluator (as
           before: A* never), lazy search with any evaluator */
        bool pref = o->preferred && (o->algo == NS_SEARCH_LAZY ||
                                     (o->algo == NS_SEARCH_GBFS && (o->evaluator || o->heuristic == NS_H_FF)));
        if (pref) {
            s.pref = ns_xmalloc(((size_t)t->nops + 1) * sizeof(int));
            s.pmark = ns_xcalloc((size_t)t->nops + 1, sizeof(uint32_t));
        }
        if (pref && o->algo == NS_SEARCH_GBFS && o->pref_cache > 0) { /* eager: keep them */
            s.pw = t->nops <= 65536 ? sizeof(uint16_t) : sizeof(int32_t);
            s.pmax = o->pref_cache / s.pw;
            if (s.pmax > UINT32_MAX) s.pmax = UINT32_MAX; /* offsets are 32-bit */
            s.pkept_below = UINT32_MAX;
            s.poff = ns_xmalloc(sizeof(uint32_t)); /* grown by ensure_nodes */
        }
        if (o->algo != NS_SEARCH_ASTAR) ns_succorder_init(&s.order, t);
        if (setup_spent(&s)) st = NS_OUT_OF_TIME;
        else if (o->algo == NS_SEARCH_LAZY) st = run_lazy(&s);
        else st = run_best_first(&s, o->algo == NS_SEARCH_ASTAR);
        r->work = s.ev->work ? s.ev->work(s.ev->ctx) : 0;
        /* eager: each generated state made; lazy: each evaluated one, its successors as entries */
        long made = o->algo == NS_SEARCH_LAZY ? r->evaluated : r->generated + 1; /* the initial state too */
        r->total_work = r->work + ns_search_setup_work(t) + made * (NS_SEARCH_STATE_WORK + t->nwords) +
                        (o->algo == NS_SEARCH_LAZY ? r->generated * NS_SEARCH_ENTRY_WORK : 0);
        free(s.pref);
        free(s.pmark);
        free(s.parena);
        free(s.poff);
        ns_succorder_free(&s.order);
        ns_evaluator_free(&s.own);
    }
    free(s.ops);
    free(s.state);
    free(s.succ);
    ns_wordfx_free(&s.fx);
    free(s.links);
    free(s.gh);
    free(s.closed);
    ol_free(&s.open);
    ol_free(&s.popen);
    ns_succgen_free(&s.sg);
    ns_registry_free(&s.reg);
    r->status = st;
    r->seconds = ns_now() - s.start;
    return st;
}

void ns_search_result_free(ns_search_result *r)
{
    free(r->plan);
    r->plan = NULL;
    r->plan_len = 0;
}

static const char *const algo_names[] = {"bfs", "astar", "gbfs", "lazy", "lama"};

int ns_search_algo_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < 5; i++)
        if (ns_streq_ci(name, algo_names[i])) return i;
    if (ns_streq_ci(name, "a*")) return NS_SEARCH_ASTAR;
    return -1;
}

const char *ns_search_algo_name(ns_search_algo a)
{
    return (unsigned)a < 5 ? algo_names[a] : "?";
}
