/*
 * opt_stop.h - why `mbsens optimize` stopped, in plain words, and whether
 * its result is a minimum (see opt_stop.c).
 */
#ifndef MBS_CLI_OPT_STOP_H
#define MBS_CLI_OPT_STOP_H

#include "mbsens/mbsens.h"

typedef struct cli_opt_stop {
    const char *words;     /* what the stop reason means */
    int converged;         /* 1: the result is a minimum to the accuracy the options ask */
    char verdict[256];     /* "converged: ..." or "NOT converged: ..." with the figures */
} cli_opt_stop;

/* The stop reason as a small number (-1: not one of the known reasons),
 * and back ("unknown" for -1): what a multistart's result rows carry. */
int cli_opt_stop_code(const char *reason);
const char *cli_opt_stop_reason(int code);

void cli_opt_stop_explain(const mbs_opt_result *res, const mbs_opt_options *o, cli_opt_stop *out);

#endif
