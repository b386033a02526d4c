/* cmd_learn_report.c — `nextstate learn`'s fitting of the learned heuristic and its reports (one JSON line, or
 * lines on stderr) of what it learned. */
#include <math.h>
#include <stdio.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/planner/planner.h"

/* --model hwl: fits (choosing the algorithm on held-out training problems,
 * ns_hwl_learn), writes and reports the learned heuristic. */
int cli_learn_hwl(ns_trajset *tr, const ns_trajset *va, const char *domain, const char *train_dir,
                    const ns_hwl_config *hc, const ns_choose_opts *co, const char *out, bool json, bool quiet)
{
    ns_error err;
    ns_hwl h;
    double t0 = ns_cpu_with_children(), val = NAN; /* (--jobs: the held-out problems are planned in children) */
    if (ns_hwl_learn(&h, tr, domain, train_dir, hc, co, &err) != NS_OK) return cli_report(&err);
    double secs = ns_cpu_with_children() - t0;
    int rc = va->n > 0 && ns_hwl_rmse(&h, va, &val, &err) != NS_OK ? cli_report(&err) : 0;
    if (!rc && ns_hwl_save(&h, out, &err) != NS_OK) rc = cli_report(&err);
    if (!rc && json) {
        ns_buf j;
        ns_buf_init(&j);
        ns_buf_printf(&j, "{\"model\": \"hwl\", \"encoder\": \"wl\", \"dim\": %d, \"train_problems\": %d, \"bootstrapped\": "
                          "%d, \"unsolved\": %d, \"satisficing\": %d, \"time_capped\": %d, \"training_plans\": \"%s\", "
                          "\"train_rows\": %ld, \"val_problems\": %d, \"train_rmse\": ",
                      h.dim, h.problems, tr->added, tr->unsolved, tr->satisficing, tr->time_capped, h.choice.plans, h.rows,
                      va->n);
        ns_json_put_num(&j, h.rmse);
        ns_buf_puts(&j, ", \"val_rmse\": ");
        ns_json_put_num(&j, val);
        ns_buf_puts(&j, ", \"algo\": ");
        ns_json_put_str(&j, ns_planner_algo_name(ns_plan_heuristic_algo(&h, NS_PLAN_BEAM)));
        ns_buf_puts(&j, ", \"choice\": [");
        for (int i = 0; i < h.choice.n; i++) {
            ns_buf_puts(&j, i ? ", {\"algo\": " : "{\"algo\": ");
            ns_json_put_str(&j, h.choice.cand[i]);
            ns_buf_printf(&j, ", \"iterations\": %d, \"solved\": %d, \"of\": %d, \"evaluated\": %ld, \"work\": %ld}",
                          h.choice.iter[i], h.choice.solved[i], h.choice.problems, h.choice.evaluated[i], h.choice.work[i]);
        }
        ns_buf_printf(&j, "], \"ff_supporter\": \"%s\", \"choice_time_capped\": %d, \"rank\": %d, \"pairs\": %ld, "
                          "\"pair_accuracy\": ",
                      h.choice.last_supporter ? "last" : "first", h.choice.time_capped, h.rank, h.pairs);
        ns_json_put_num(&j, h.pair_acc);
        ns_buf_printf(&j, ", \"seconds\": %.3f, \"output\": ", secs);
        ns_json_put_str(&j, out);
        ns_buf_puts(&j, "}\n");
        fputs(j.data, stdout);
        ns_buf_free(&j);
    } else if (!rc && !quiet) {
        char vs[64] = "", rs[96] = "", bs[96] = "";
        if (tr->added || (co->bootstrap > 0 && tr->unsolved)) /* bootstrapping */
            snprintf(bs, sizeof bs, "; %d more planned with h, %s", tr->added, h.problems == tr->n ? "kept" : "not kept");
        if (va->n) snprintf(vs, sizeof vs, " (validation %d problems: %.3f)", va->n, val);
        if (h.rank) snprintf(rs, sizeof rs, ", %ld ranking pairs (%.1f %% ordered right)", h.pairs, 100 * h.pair_acc);
        else if (hc->rank) snprintf(rs, sizeof rs, ", no ranking term (%d features: too many for its solve)", h.dim);
        fprintf(stderr, "learn: wl-hwl, D = %d, %d problems (%ld states; %s plans%s), h* RMSE %.3f%s%s; %.2f s; wrote %s\n",
                h.dim, h.problems, h.rows, h.choice.plans[0] ? h.choice.plans : "solved", bs, h.rmse, vs, rs, secs, out);
        if (h.choice.n) {
            ns_buf b;
            ns_buf_init(&b);
            ns_hwl_choice_str(&h, &b);
            fprintf(stderr, "learn: %s\n", b.data);
            ns_buf_free(&b);
        }
    }
    ns_hwl_free(&h);
    return rc;
}

/* Reports a trained progress model (JSON line, or one line on stderr). */
void cli_learn_report(const ns_predictor *m, const ns_trajset *tr, const ns_trajset *va,
                      const ns_predictor_config *cfg, const char *out, bool json, bool quiet)
{
    if (json) {
        ns_buf j;
        ns_buf_init(&j);
        ns_buf_printf(&j, "{\"model\": \"%s\", \"mode\": \"%s\", \"encoder\": \"%s\", \"dim\": %d, ",
                      ns_predictor_kind_name(m->kind), ns_predictor_mode_name(m->mode),
                      ns_encoder_kind_name(m->enc.kind), m->dim);
        ns_buf_printf(&j, "\"train_problems\": %d, \"train_rows\": %ld, \"val_problems\": %d, \"val_rows\": %ld, "
                          "\"size\": %ld, \"best_epoch\": %d, \"best_val\": ",
                      tr->n, m->train_rows, va->n, m->val_rows, ns_predictor_size(m), m->best_epoch);
        ns_json_put_num(&j, m->best_val);
        ns_buf_printf(&j, ", \"seed\": %llu, \"seconds\": %.3f, \"output\": ", (unsigned long long)cfg->seed,
                      m->train_seconds);
        ns_json_put_str(&j, out);
        ns_buf_puts(&j, "}\n");
        fputs(j.data, stdout);
        ns_buf_free(&j);
    } else if (!quiet) {
        fprintf(stderr,
                "learn: %s-%s-%s, D = %d, %d problems (%ld transitions), validation %d (%ld); "
                "%s %d kept, validation loss %.5f; %ld %s; %.2f s; wrote %s\n",
                ns_encoder_kind_name(m->enc.kind), ns_predictor_kind_name(m->kind), ns_predictor_mode_name(m->mode),
                m->dim, tr->n, m->train_rows, va->n, m->val_rows, m->kind == NS_PREDICTOR_LSTM ? "epoch" : "rounds",
                m->best_epoch, m->best_val, ns_predictor_size(m),
                m->kind == NS_PREDICTOR_LSTM ? "parameters" : "rounds", m->train_seconds, out);
    }
}
