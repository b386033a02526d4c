/* error.h — error values and located messages.
 *
 * Library functions return an ns_status (0 = success) and, on failure, fill a
 * caller-owned ns_error.  Only the command-line tool prints and exits.  The
 * numeric values double as the CLI's exit codes (see README "Exit codes"). */
#ifndef NEXTSTATE_ERROR_H
#define NEXTSTATE_ERROR_H

#include <stddef.h>

typedef enum ns_status {
    NS_OK = 0,
    NS_UNSOLVABLE = 10,      /* search proved there is no plan */
    NS_INCOMPLETE = 11,      /* incomplete search gave up without a plan */
    NS_INVALID_PLAN = 12,    /* validate: the plan does not solve the task */
    NS_OUT_OF_MEMORY = 22,   /* memory limit reached */
    NS_OUT_OF_TIME = 23,     /* time limit reached */
    NS_ERR_USAGE = 30,       /* bad command line */
    NS_ERR_INPUT = 31,       /* malformed or inconsistent input file */
    NS_ERR_IO = 32,          /* file missing, unreadable or unwritable */
    NS_ERR_UNSUPPORTED = 33, /* valid input using an unsupported feature */
    NS_ERR_INTERNAL = 34     /* a bug: an invariant did not hold */
} ns_status;

typedef struct ns_error {
    ns_status code;
    char file[256]; /* empty when the error has no file */
    int line, col;  /* 1-based; 0 when unknown */
    char msg[512];
} ns_error;

/* Fills *e (if e is non-NULL) and returns code.  file may be NULL. */
ns_status ns_error_set(ns_error *e, ns_status code, const char *file, int line,
                       int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Writes "file:line:col: message" (parts omitted when unknown) into buf. */
void ns_error_format(const ns_error *e, char *buf, size_t n);

/* The status in words, one word set for every command ("solved",
 * "unsolvable", "incomplete", "out of time", "input error", …). */
const char *ns_status_name(ns_status s);

/* Clears *e to "no error". */
void ns_error_clear(ns_error *e);

#endif
