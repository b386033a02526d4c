/* cmd_validate.c — `nextstate validate`. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/core/plan.h"

int cmd_validate(int argc, char **argv)
{
    const char *pos[3] = {0};
    int npos = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("validate", "unknown option '%s'", argv[i]);
        else if (npos < 3) pos[npos++] = argv[i];
        else return cli_usage("validate", "too many arguments");
    }
    if (npos != 3) return cli_usage("validate", "expects DOMAIN PROBLEM PLAN");
    cli_task ct;
    int rc = cli_task_load(&ct, pos[0], pos[1]);
    if (rc) return rc;
    ns_plan plan;
    ns_error err;
    ns_status st = ns_plan_read(&plan, &ct.task, pos[2], &err);
    if (st != NS_OK) {
        cli_task_free(&ct);
        return cli_report(&err);
    }
    ns_validation v;
    st = ns_plan_validate(&ct.task, &plan, &v);
    ns_buf step;
    ns_buf_init(&step);
    if (v.failed_step >= 0) {
        const ns_plan_step *s = &plan.steps[v.failed_step];
        ns_buf_printf(&step, "(%s", ct.domain.actions[s->schema].name);
        for (int i = 0; i < s->nargs; i++) ns_buf_printf(&step, " %s", ct.problem.objects[s->args[i]]);
        ns_buf_putc(&step, ')');
    }
    if (json) {
        ns_buf j;
        ns_buf_init(&j);
        ns_buf_printf(&j, "{\"valid\": %s, \"plan_length\": %d, \"cost\": %ld, \"failed_step\": %d, \"reason\": ",
                      v.valid ? "true" : "false", v.plan_len, v.cost, v.failed_step >= 0 ? v.failed_step + 1 : 0);
        ns_json_put_str(&j, v.reason);
        ns_buf_puts(&j, "}\n");
        fputs(j.data, stdout);
        ns_buf_free(&j);
    } else if (v.valid) {
        printf("plan valid: %d steps, cost %ld\n", v.plan_len, v.cost);
    } else if (v.failed_step >= 0) {
        printf("%s:%d: step %d %s is not applicable: %s\n", pos[2], plan.steps[v.failed_step].line, v.failed_step + 1,
               step.data, v.reason);
    } else {
        printf("%s: plan invalid: %s\n", pos[2], v.reason);
    }
    ns_buf_free(&step);
    ns_plan_free(&plan);
    cli_task_free(&ct);
    return (int)st;
}
