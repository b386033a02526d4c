/* test_state.c — the state registry: insert/find, dense ids, duplicates,
 * growth past many table doublings, hashing. */
#include "nextstate/core/state.h"
#include "nextstate/util/util.h"
#include "test.h"

static void test_insert_find(void)
{
    ns_registry r;
    ns_registry_init(&r, 2);
    ns_word a[2] = {1, 2}, b[2] = {1, 3}, c[2] = {0, 0};
    bool is_new = false;
    CHECK_EQ_INT(ns_registry_find(&r, a), NS_NO_STATE);
    CHECK_EQ_INT(ns_registry_insert(&r, a, &is_new), 0);
    CHECK(is_new);
    CHECK_EQ_INT(ns_registry_insert(&r, b, &is_new), 1);
    CHECK(is_new);
    CHECK_EQ_INT(ns_registry_insert(&r, a, &is_new), 0);
    CHECK(!is_new);
    CHECK_EQ_INT(ns_registry_insert(&r, c, NULL), 2);
    CHECK_EQ_INT(ns_registry_find(&r, b), 1);
    CHECK_EQ_INT(ns_registry_find(&r, c), 2);
    CHECK_EQ_INT(r.n, 3);
    CHECK(ns_registry_get(&r, 1)[0] == 1 && ns_registry_get(&r, 1)[1] == 3);
    ns_word d[2] = {2, 1};
    CHECK_EQ_INT(ns_registry_find(&r, d), NS_NO_STATE);
    CHECK(ns_registry_bytes(&r) > 0);
    ns_registry_free(&r);
}

static void test_growth_random(void)
{
    enum { N = 100000, NW = 3 };
    ns_registry r;
    ns_registry_init(&r, NW);
    ns_rng rng;
    ns_rng_seed(&rng, 42);
    ns_word *states = ns_xmalloc((size_t)N * NW * sizeof(ns_word));
    for (int i = 0; i < N; i++) {
        /* Sparse-ish states over few bits make collisions in low words common. */
        states[i * NW + 0] = ns_rng_next(&rng) & 0xff;
        states[i * NW + 1] = (uint64_t)i;
        states[i * NW + 2] = 0;
    }
    int bad_id = 0, bad_new = 0;
    for (int i = 0; i < N; i++) {
        bool is_new;
        uint32_t id = ns_registry_insert(&r, states + i * NW, &is_new);
        if (id != (uint32_t)i) bad_id++;
        if (!is_new) bad_new++;
    }
    CHECK_EQ_INT(bad_id, 0);
    CHECK_EQ_INT(bad_new, 0);
    CHECK_EQ_INT(r.n, N);
    /* The table stays a power of two and at most 70 % full. */
    CHECK(((r.tmask + 1) & r.tmask) == 0);
    CHECK((double)r.n <= 0.7 * (double)(r.tmask + 1));
    /* Every state is found again, in reverse order, with its id and bits. */
    int bad_find = 0, bad_dup = 0, bad_bits = 0;
    for (int i = N - 1; i >= 0; i--) {
        if (ns_registry_find(&r, states + i * NW) != (uint32_t)i) bad_find++;
        bool is_new;
        if (ns_registry_insert(&r, states + i * NW, &is_new) != (uint32_t)i || is_new) bad_dup++;
        const ns_word *g = ns_registry_get(&r, (uint32_t)i);
        for (int w = 0; w < NW; w++)
            if (g[w] != states[i * NW + w]) bad_bits++;
    }
    CHECK_EQ_INT(bad_find, 0);
    CHECK_EQ_INT(bad_dup, 0);
    CHECK_EQ_INT(bad_bits, 0);
    CHECK_EQ_INT(r.n, N);
    /* Absent states are not found. */
    ns_word x[NW] = {0x100, 7, 0};
    CHECK_EQ_INT(ns_registry_find(&r, x), NS_NO_STATE);
    free(states);
    ns_registry_free(&r);
}

static void test_duplicates_random(void)
{
    /* 20k inserts drawn from 1000 distinct states: ids stay dense 0..999. */
    ns_registry r;
    ns_registry_init(&r, 1);
    ns_rng rng;
    ns_rng_seed(&rng, 7);
    uint32_t first_id[1000];
    for (int i = 0; i < 1000; i++) first_id[i] = NS_NO_STATE;
    int bad = 0;
    for (int k = 0; k < 20000; k++) {
        int v = (int)ns_rng_below(&rng, 1000);
        ns_word s = (ns_word)v * 0x9e3779b97f4a7c15ULL;
        bool is_new;
        uint32_t id = ns_registry_insert(&r, &s, &is_new);
        if (first_id[v] == NS_NO_STATE) {
            if (!is_new || id != r.n - 1) bad++;
            first_id[v] = id;
        } else if (is_new || id != first_id[v]) {
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(r.n <= 1000);
    ns_registry_free(&r);
}

static void test_zero_words(void)
{
    /* A task without fluent atoms has exactly one state. */
    ns_registry r;
    ns_registry_init(&r, 0);
    bool is_new;
    CHECK_EQ_INT(ns_registry_insert(&r, NULL, &is_new), 0);
    CHECK(is_new);
    CHECK_EQ_INT(ns_registry_insert(&r, NULL, &is_new), 0);
    CHECK(!is_new);
    CHECK_EQ_INT(r.n, 1);
    ns_registry_free(&r);
}

static void test_hash(void)
{
    ns_word a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
    CHECK(ns_state_hash(a, 3) == ns_state_hash(a, 3));
    CHECK(ns_state_hash(a, 3) != ns_state_hash(b, 3));
    CHECK(ns_state_hash(a, 2) != ns_state_hash(a, 3));
    /* Same function as util.h's byte hash over the state's bytes (stable). */
    CHECK(ns_state_hash(a, 3) == ns_hash_bytes(a, sizeof a, 0x6e6578747374ULL));
}

static void test_hashed_and_peek(void)
{
    /* the registry's hash is the sum of its per-word terms; insert_hashed and
       insert agree; peek names the state a slot holds for a matching hash */
    ns_word a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
    CHECK(ns_registry_hash(a, 3) == ns_word_hash(0, 1) + ns_word_hash(1, 2) + ns_word_hash(2, 3));
    CHECK(ns_registry_hash(a, 3) != ns_registry_hash(b, 3));
    ns_registry r;
    ns_registry_init(&r, 3);
    bool is_new;
    CHECK_EQ_INT(ns_registry_peek(&r, ns_registry_hash(a, 3)), NS_NO_STATE);
    CHECK_EQ_INT(ns_registry_insert_hashed(&r, a, ns_registry_hash(a, 3), &is_new), 0);
    CHECK(is_new);
    CHECK_EQ_INT(ns_registry_insert(&r, a, &is_new), 0);
    CHECK(!is_new);
    CHECK_EQ_INT(ns_registry_peek(&r, ns_registry_hash(a, 3)), 0);
    CHECK_EQ_INT(ns_registry_insert_hashed(&r, b, ns_registry_hash(b, 3), &is_new), 1);
    CHECK(is_new);
    CHECK_EQ_INT(ns_registry_find(&r, b), 1);
    ns_registry_free(&r);
}

int main(void)
{
    NS_RUN(test_insert_find);
    NS_RUN(test_growth_random);
    NS_RUN(test_duplicates_random);
    NS_RUN(test_zero_words);
    NS_RUN(test_hash);
    NS_RUN(test_hashed_and_peek);
    return ns_test_summary("test_state");
}
