/* error.c — located error messages. */
#include "nextstate/util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ns_status ns_error_set(ns_error *e, ns_status code, const char *file, int line,
                       int col, const char *fmt, ...)
{
    if (!e) return code;
    e->code = code;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    e->line = line;
    e->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

void ns_error_format(const ns_error *e, char *buf, size_t n)
{
    if (!e->file[0])
        snprintf(buf, n, "%s", e->msg);
    else if (e->line <= 0)
        snprintf(buf, n, "%s: %s", e->file, e->msg);
    else if (e->col <= 0)
        snprintf(buf, n, "%s:%d: %s", e->file, e->line, e->msg);
    else
        snprintf(buf, n, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
}

void ns_error_clear(ns_error *e)
{
    memset(e, 0, sizeof *e);
}

const char *ns_status_name(ns_status s)
{
    switch (s) {
    case NS_OK: return "solved";
    case NS_UNSOLVABLE: return "unsolvable";
    case NS_INCOMPLETE: return "incomplete";
    case NS_INVALID_PLAN: return "invalid plan";
    case NS_OUT_OF_MEMORY: return "out of memory";
    case NS_OUT_OF_TIME: return "out of time";
    case NS_ERR_USAGE: return "usage error";
    case NS_ERR_INPUT: return "input error";
    case NS_ERR_IO: return "I/O error";
    case NS_ERR_UNSUPPORTED: return "unsupported";
    case NS_ERR_INTERNAL: return "internal error";
    }
    return "error";
}
