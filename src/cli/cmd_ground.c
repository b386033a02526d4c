/* cmd_ground.c — `nextstate ground`: grounding statistics and listings. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_ground(int argc, char **argv)
{
    const char *pos[2] = {0};
    int npos = 0;
    bool json = false, atoms = false, statics = false, ops = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--atoms")) atoms = true;
        else if (!strcmp(argv[i], "--statics")) statics = true;
        else if (!strcmp(argv[i], "--operators")) ops = true;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("ground", "unknown option '%s'", argv[i]);
        else if (npos < 2) pos[npos++] = argv[i];
        else return cli_usage("ground", "too many arguments");
    }
    if (npos != 2) return cli_usage("ground", "expects DOMAIN and PROBLEM");
    cli_task ct;
    int rc = cli_task_load(&ct, pos[0], pos[1]);
    if (rc) return rc;
    const ns_task *t = &ct.task;
    ns_buf b;
    ns_buf_init(&b);
    if (json) {
        ns_buf_printf(&b,
                      "{\"objects\": %d, \"atoms\": %d, \"statics\": %d, \"operators\": %d, \"goal_atoms\": %d, "
                      "\"goal_impossible\": %s, \"unit_cost\": %s, \"seconds\": %.6f}\n",
                      ct.problem.nobjects, t->natoms, t->nstatics, t->nops, t->ngoal_pos + t->ngoal_neg,
                      t->goal_impossible ? "true" : "false", t->unit_cost ? "true" : "false", ct.ground_seconds);
    } else {
        ns_buf_printf(&b, "objects %d\natoms %d\nstatics %d\noperators %d\ngoal atoms %d%s\ngrounding %.3f s\n",
                      ct.problem.nobjects, t->natoms, t->nstatics, t->nops, t->ngoal_pos + t->ngoal_neg,
                      t->goal_impossible ? " (unreachable goal)" : "", ct.ground_seconds);
    }
    for (int i = 0; atoms && i < t->natoms; i++) {
        ns_buf_puts(&b, "atom ");
        ns_task_atom_str(t, i, &b);
        ns_buf_putc(&b, '\n');
    }
    for (int i = 0; statics && i < t->nstatics; i++) {
        ns_buf_puts(&b, "static ");
        ns_task_static_str(t, i, &b);
        ns_buf_putc(&b, '\n');
    }
    for (int i = 0; ops && i < t->nops; i++) {
        ns_buf_puts(&b, "operator ");
        ns_task_op_str(t, i, &b);
        ns_buf_putc(&b, '\n');
    }
    fputs(b.data, stdout);
    ns_buf_free(&b);
    cli_task_free(&ct);
    return 0;
}
