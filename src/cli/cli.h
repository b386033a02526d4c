/* cli.h — shared pieces of the command-line tool's subcommands. */
#ifndef NEXTSTATE_CLI_H
#define NEXTSTATE_CLI_H

#include <math.h> /* INFINITY, for cli_parse_min */
#include <limits.h> /* LONG_MAX for cli_parse_range */
#include <stdbool.h>
#include "nextstate/core/pddl.h"
#include "nextstate/core/task.h"
#include "nextstate/data/render.h" /* ns_prompt_layout */

/* A domain + problem + grounded task loaded together (ns_task_load). */
typedef ns_loaded_task cli_task;

/* ns_task_load; prints "file:line:col: message" and returns the exit code on
 * failure (0 on success), and a warning for ignored init atoms. */
int cli_task_load(cli_task *ct, const char *domain_path, const char *problem_path);
/* The same, grounding within lim (NULL: none). */
int cli_task_load_limited(cli_task *ct, const char *domain_path, const char *problem_path, const ns_ground_limits *lim);
void cli_task_free(cli_task *ct);
/* Takes the CPU seconds spent off *limit (0: none) and says whether any is
 * left: a spent limit sets up no search (a search reads the clock only between
 * its set-up phases, each seconds long on millions of operators). */
bool cli_limit_left(double *limit, double spent);

/* Do two paths name the same file or directory? */
bool cli_same_dir(const char *x, const char *y);

/* Prints an error as "nextstate: file:line:col: message" and returns its code. */
int cli_report(const ns_error *e);
/* Prints a usage error for cmd and returns NS_ERR_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a number option value; returns false (after printing) when bad. */
bool cli_parse_double(const char *cmd, const char *opt, const char *s, double *out);
/* The same, also requiring value ≥ lo (inclusive) or > lo, and < hi
 * (INFINITY: no upper bound); one message either way. */
bool cli_parse_min(const char *cmd, const char *opt, const char *s, double lo, bool inclusive, double hi, double *out);
bool cli_parse_long(const char *cmd, const char *opt, const char *s, long *out);
/* The same, also requiring lo ≤ value ≤ hi (hi = LONG_MAX: no upper bound);
 * one message either way. */
bool cli_parse_range(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out);


int cmd_solve(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_ground(int argc, char **argv);
int cmd_data(int argc, char **argv);
/* `data export`, `data plans` (cmd_data_export.c); argv[0] is the subcommand */
int cli_data_export(int argc, char **argv);
int cli_data_plans(int argc, char **argv);
int cmd_split(int argc, char **argv);
int cmd_embed(int argc, char **argv);
/* `embed stats DIR…` (cmd_embed_stats.c), the options parsed by cmd_embed */
int cli_embed_stats(const char *model, const char *domains, ns_prompt_layout layout, bool json, int ndirs,
                    const char *const *dirs);
/* `embed tokenize TEXT…` (cmd_embed_stats.c). */
int cli_embed_tokenize(const char *model, bool json, int ntexts, const char *const *texts);
int cmd_encode(int argc, char **argv);
/* `learn`'s learned heuristic (cmd_learn_report.c): fitted with its choices on held-out training problems
 * (ns_hwl_learn), written to out and reported; and a trained predictor's report. */
struct ns_trajset;
struct ns_hwl_config;
struct ns_choose_opts;
struct ns_predictor;
struct ns_predictor_config;
int cli_learn_hwl(struct ns_trajset *tr, const struct ns_trajset *va, const char *domain, const char *train_dir,
                  const struct ns_hwl_config *hc, const struct ns_choose_opts *co, const char *out, bool json, bool quiet);
void cli_learn_report(const struct ns_predictor *m, const struct ns_trajset *tr, const struct ns_trajset *va,
                      const struct ns_predictor_config *cfg, const char *out, bool json, bool quiet);
int cmd_featurize(int argc, char **argv);
/* `featurize pca` (cmd_featurize_pca.c); argv[0] is "pca" */
int cli_featurize_pca(int argc, char **argv);
int cmd_train(int argc, char **argv);
extern const char cli_train_usage[]; /* `nextstate help train` */
int cmd_eval(int argc, char **argv);
int cmd_reference(int argc, char **argv);
int cmd_learn(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* Single-threaded BLAS for the commands that plan (solve, plan, ground, validate, gen). */
void cli_blas_threads(char **argv);

#endif
