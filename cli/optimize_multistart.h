/*
 * optimize_multistart.h - `mbsens optimize --multistart N`
 * (optimize_multistart.c; docs/cli.md, docs/scaling.md).
 */
#ifndef MBS_CLI_OPTIMIZE_MULTISTART_H
#define MBS_CLI_OPTIMIZE_MULTISTART_H

#include <stdint.h>
#include <stdio.h>

#include "mbsens/mbsens.h"

typedef struct cli_multistart {
    long starts;              /* N >= 1 */
    uint64_t seed;            /* of the starts' draws */
    int threads;              /* per process (0: OpenMP's default, OMP_NUM_THREADS) */
    const char *model_path;   /* the MODEL argument (messages, JSON, --out checks) */
    const char *out;          /* --out FILE: the JSON report (NULL: none) */
    int json;                 /* the JSON report on standard output instead of the text */
} cli_multistart;

/* The options --multistart N (1 to 10^6), --seed S (default 1), --threads
 * T (0 to 4096; 0: OpenMP's default) and --json (NULL or 0: not given)
 * into ms; files: --model-out, --history or --plot given (refused with
 * --multistart). --seed and --json need --multistart. CLI_EXIT_OK or
 * CLI_EXIT_USAGE after a message. */
int cli_multistart_options(const char *cmd, void (*usage)(FILE *), const char *starts, const char *seed,
                           const char *threads, int files, int json, cli_multistart *ms);

/* N optimizations of m with options o (its callbacks are not called; each
 * start computes its gradients on one thread) from starts drawn uniformly
 * within the bounds of the free parameters, on threads and, started by
 * mpirun, on MPI ranks through the hand-out of `mbsens sweep`. Prints the
 * report (rank 0). Returns the exit status: CLI_EXIT_OK when at least one
 * start finished. */
int cli_optimize_multistart(const char *cmd, const mbs_model *m, const mbs_opt_options *o, const int *fixed,
                            const cli_multistart *ms);

#endif
