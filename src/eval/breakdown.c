/* breakdown.c — Hit@k by cost-to-go and the facts of the misses (breakdown.h). */
#include "nextstate/eval/breakdown.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/util/json.h"

/* The literal texts of state s of ds (sorted, malloc'ed), their number in *n. */
static const char **literals(const ns_dataset *ds, int64_t s, int *n)
{
    const ns_ds_problem *p = &ds->problems[((const int32_t *)ds->state_problem.data)[s]];
    const uint64_t *bits = ns_dataset_state(ds, s);
    const char **out = ns_xmalloc((size_t)(p->natoms ? p->natoms : 1) * sizeof *out);
    *n = 0;
    for (int a = 0; a < p->natoms; a++)
        if (bits[a / 64] >> (a % 64) & 1) out[(*n)++] = p->atoms[a];
    qsort(out, (size_t)*n, sizeof *out, ns_cmp_str);
    return out;
}

int64_t ns_breakdown_fact_diff(const ns_dataset *da, int64_t a, const ns_dataset *db, int64_t b, bool *other)
{
    int32_t pa = ((const int32_t *)da->state_problem.data)[a], pb = ((const int32_t *)db->state_problem.data)[b];
    *other = da != db || pa != pb;
    if (!*other) {
        const uint64_t *x = ns_dataset_state(da, a), *y = ns_dataset_state(db, b);
        int nw = (da->problems[pa].natoms + 63) / 64;
        int64_t d = 0;
        for (int w = 0; w < nw; w++) d += __builtin_popcountll(x[w] ^ y[w]);
        return d;
    }
    int na, nb;
    const char **la = literals(da, a, &na), **lb = literals(db, b, &nb);
    int64_t same = 0;
    for (int i = 0, j = 0; i < na && j < nb;) {
        int c = strcmp(la[i], lb[j]);
        if (c == 0) same++, i++, j++;
        else if (c < 0) i++;
        else j++;
    }
    free(la);
    free(lb);
    return (int64_t)na + nb - 2 * same;
}

/* numpy's default percentile (linear interpolation) of sorted x[0 … n). */
static double quantile(const int64_t *x, int64_t n, double q)
{
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    int64_t hi = lo + 1 < n ? lo + 1 : lo;
    return (double)x[lo] + (pos - (double)lo) * (double)(x[hi] - x[lo]);
}

static void miss_finish(ns_miss_stats *m, int64_t *facts)
{
    if (!m->n) {
        m->mean = m->median = m->q1 = m->q3 = NAN;
        return;
    }
    qsort(facts, (size_t)m->n, sizeof *facts, ns_cmp_i64);
    double s = 0;
    for (int64_t i = 0; i < m->n; i++) s += (double)facts[i];
    m->mean = s / (double)m->n;
    m->median = quantile(facts, m->n, 0.5);
    m->q1 = quantile(facts, m->n, 0.25);
    m->q3 = quantile(facts, m->n, 0.75);
}

void ns_breakdown_compute(const ns_world_inputs *in, const ns_refs *refs, const ns_eval_query *q, ns_breakdown *b)
{
    memset(b, 0, sizeof *b);
    b->n = refs->n;
    int64_t *facts[2];
    for (int k = 0; k < 2; k++) facts[k] = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * sizeof *facts[k]);
    for (int64_t i = 0; i < refs->n; i++) {
        int d = (int)refs->ref[2 * i];
        const ns_dataset *ds = in->ds[d];
        const int32_t *tr = ns_dataset_transition(ds, refs->ref[2 * i + 1]);
        int32_t h = ((const int32_t *)ds->state_hstar.data)[tr[1]];
        ns_ctg_bucket *c = &b->ctg[h < 0 ? NS_CTG_OPEN + 1 : h >= NS_CTG_OPEN ? NS_CTG_OPEN : h];
        c->n++;
        c->hit[0] += q[i].bits & 1u ? 1 : 0;
        c->hit[1] += q[i].bits & 2u ? 1 : 0;
        if (q[i].top_row < 0) continue; /* a Hit@1, or nothing else in the pool */
        bool other;
        int64_t f = ns_breakdown_fact_diff(ds, q[i].top_row - in->state_base[d], ds, tr[3], &other);
        for (int k = 0; k < 2; k++) {
            if (k == 1 && (q[i].bits & 2u)) continue; /* a Hit@5 */
            ns_miss_stats *m = &b->miss[k];
            facts[k][m->n++] = f;
            m->other_problem += other;
            m->hist[f >= NS_MISS_OPEN ? NS_MISS_OPEN : f]++;
        }
    }
    for (int h = 0; h < NS_CTG_OPEN + 2; h++)
        if (b->ctg[h].n)
            for (int k = 0; k < 2; k++) b->ctg[h].hit[k] /= (double)b->ctg[h].n;
    for (int k = 0; k < 2; k++) {
        miss_finish(&b->miss[k], facts[k]);
        free(facts[k]);
    }
}

static void put_miss(const ns_miss_stats *m, ns_buf *out)
{
    ns_buf_printf(out, "{\"n\": %lld, \"other_problem\": %lld", (long long)m->n, (long long)m->other_problem);
    const char *keys[4] = {"mean", "median", "q1", "q3"};
    const double v[4] = {m->mean, m->median, m->q1, m->q3};
    for (int i = 0; i < 4; i++) {
        ns_buf_printf(out, ", \"%s\": ", keys[i]);
        ns_json_put_num(out, v[i]);
    }
    ns_buf_puts(out, ", \"hist\": [");
    for (int f = 0; f <= NS_MISS_OPEN; f++) {
        if (f) ns_buf_puts(out, ", ");
        if (f < NS_MISS_OPEN) ns_buf_printf(out, "{\"facts\": %d, \"facts_max\": %d", f, f);
        else ns_buf_printf(out, "{\"facts\": %d, \"facts_max\": null", f);
        ns_buf_printf(out, ", \"n\": %lld}", (long long)m->hist[f]);
    }
    ns_buf_puts(out, "]}");
}

void ns_breakdown_json(const ns_breakdown *b, ns_buf *out)
{
    ns_buf_puts(out, "\"cost_to_go\": [");
    bool first = true;
    for (int h = 0; h < NS_CTG_OPEN + 2; h++) {
        const ns_ctg_bucket *c = &b->ctg[h];
        if (!c->n) continue;
        ns_buf_puts(out, first ? "{\"h\": " : ", {\"h\": ");
        first = false;
        if (h < NS_CTG_OPEN) ns_buf_printf(out, "%d, \"h_max\": %d", h, h);
        else if (h == NS_CTG_OPEN) ns_buf_printf(out, "%d, \"h_max\": null", h);
        else ns_buf_puts(out, "null, \"h_max\": null");
        ns_buf_printf(out, ", \"n\": %lld, \"hit@1\": ", (long long)c->n);
        ns_json_put_num(out, c->hit[0]);
        ns_buf_puts(out, ", \"hit@5\": ");
        ns_json_put_num(out, c->hit[1]);
        ns_buf_putc(out, '}');
    }
    ns_buf_puts(out, "], \"misses\": {\"top1\": ");
    put_miss(&b->miss[0], out);
    ns_buf_puts(out, ", \"top5\": ");
    put_miss(&b->miss[1], out);
    ns_buf_putc(out, '}');
}

void ns_breakdown_table(const ns_breakdown *b, ns_buf *out)
{
    ns_buf_puts(out, "by cost to go      h*(s)   queries   Hit@1    Hit@5\n");
    for (int h = 0; h < NS_CTG_OPEN + 2; h++) {
        const ns_ctg_bucket *c = &b->ctg[h];
        if (!c->n) continue;
        char lab[16];
        if (h < NS_CTG_OPEN) snprintf(lab, sizeof lab, "%d", h);
        else if (h == NS_CTG_OPEN) snprintf(lab, sizeof lab, ">=%d", h);
        else snprintf(lab, sizeof lab, "unknown");
        ns_buf_printf(out, "                   %7s %8lld  %6.2f%%  %6.2f%%\n", lab, (long long)c->n, 100 * c->hit[0],
                      100 * c->hit[1]);
    }
    const char *name[2] = {"top-1 misses", "Hit@5 misses"};
    for (int k = 0; k < 2; k++) {
        const ns_miss_stats *m = &b->miss[k];
        ns_buf_printf(out, "%-18s %lld", name[k], (long long)m->n);
        if (!m->n) {
            ns_buf_puts(out, "\n");
            continue;
        }
        ns_buf_printf(out, " (%lld from another problem); facts differing from the truth: median %.1f (IQR %.1f–%.1f), "
                           "mean %.2f\n                   facts:",
                      (long long)m->other_problem, m->median, m->q1, m->q3, m->mean);
        for (int f = 0; f <= NS_MISS_OPEN; f++) ns_buf_printf(out, f < NS_MISS_OPEN ? " %d:%lld" : " >=%d:%lld", f,
                                                              (long long)m->hist[f]);
        ns_buf_puts(out, "\n");
    }
}
