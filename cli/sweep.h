/*
 * sweep.h - `mbsens sweep SPEC.json` (docs/scaling.md): the spec and its
 * cases (sweep_spec.c), the ledger of finished cases with its checkpoint
 * file (sweep_ledger.c), and the drivers that hand the cases out: threads
 * in one process (cmd_sweep.c) and MPI ranks (mpi/sweep_mpi.c).
 *
 * A case is named by its index alone: every process derives its values
 * from the spec (grids and lists by position, random samples from a
 * generator seeded by the spec's seed and the case index), so the drivers
 * send indices one way and result rows the other.
 */
#ifndef MBS_CLI_SWEEP_H
#define MBS_CLI_SWEEP_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "mbsens/mbsens.h"

#include "cli_util.h"

typedef enum { SWEEP_PARAM = 0, SWEEP_Q0, SWEEP_QD0 } sweep_target;
typedef enum { SWEEP_UNIFORM = 0, SWEEP_NORMAL } sweep_dist;
typedef enum { SWEEP_GRID = 0, SWEEP_LIST, SWEEP_RANDOM } sweep_kind;
typedef enum { SWEEP_SENSITIVITY = 0, SWEEP_SIMULATE, SWEEP_DERIVATIVES, SWEEP_NOOP } sweep_what;

typedef struct sweep_var {
    char *name;               /* as in the spec: a parameter, "q0.COORD" or "qd0.COORD" */
    sweep_target target;
    int index;                /* parameter or coordinate index */
    int count;                /* grid: number of values */
    double *values;           /* grid: its values */
    sweep_dist dist;          /* random */
    double a, b;              /* uniform: lower, upper; normal: mean, standard deviation */
} sweep_var;

typedef struct sweep {
    char *model_path;
    mbs_model *m;
    sweep_kind kind;
    int nvar;
    sweep_var *var;
    long ncases;
    double *list;             /* list: ncases x nvar */
    uint64_t seed;            /* random */
    sweep_what what;
    mbs_sens_options sens;    /* sensitivity: everything; simulate: .sim */
    mbs_fd_algorithm alg;     /* derivatives */
    unsigned write;           /* derivatives: bit k for qdd, dqdd_dq, dqdd_dqd, dqdd_dtau */
    int ncols;                /* result columns of a case */
    char **cols;
    uint64_t hash;            /* of the spec and model texts (checkpoint identity) */
} sweep;

/* Load the spec (model path relative to the spec's directory): CLI_EXIT_OK,
 * or CLI_EXIT_FAIL after a message "SPEC: json path: what is wrong". */
int sweep_load(sweep *s, const char *cmd, const char *path);
void sweep_free(sweep *s);
/* The generator of case i's random draws: seeded by the seed and i alone
 * (any case can be drawn by itself), then uniform numbers in (0, 1) (53
 * random bits, never 0) from it. */
uint64_t cases_rng(uint64_t seed, long i);
double cases_unit_open(uint64_t *g);
/* The nvar values of case i. */
void sweep_case_values(const sweep *s, long i, double *x);
/* Compute case i into row (ncols). d: a data of s->m for this thread.
 * MBS_OK or a negative status with err filled. */
int sweep_case_run(const sweep *s, mbs_data *d, long i, double *row, mbs_error *err);

/* ---- finished cases ----
 * The ledger serves `mbsens sweep` and `mbsens optimize --multistart`
 * alike: ncases cases of ncols result values each, computed by run. */
struct sweep_ledger;
/* Compute the cases idx[0..n-1] on `threads` threads and record them
 * (sweep_ledger_record). */
typedef void (*cases_run_fn)(struct sweep_ledger *L, const long *idx, long n, int threads);

typedef struct sweep_ledger {
    const sweep *s;           /* the sweep's ledger (NULL: another job's) */
    long ncases;
    int ncols;
    cases_run_fn run;
    void *user;               /* the job's, for run */
    int open;                 /* opened (cases_ledger_open): to close */
    double *rows;             /* ncases x ncols (a sweep's case with texts: its row is in their block,
                                 rowp; read either through sweep_ledger_row) */
    int *status;
    char **msg;               /* failures: the message (malloc'd) */
    unsigned char *done;
    char **text[3];           /* sweeps: per case, its CSV row (text[0]) and JSON object (text[1]), as
                                 the computing thread formats them (NULL: table not wanted, or no text:
                                 the table's writer formats the row), and on a worker rank of a sweep
                                 with a checkpoint its checkpoint line (text[2]), kept in blocks until
                                 released */
    unsigned *tlen[3];        /* their lengths (with text[k]) */
    struct text_block **tblock;  /* per case, the block holding its texts (NULL: none) */
    double **rowp;            /* per case, its row in that block (NULL: in rows) */
    struct text_block *blocks;   /* the texts' storage in use, the one being filled first */
    struct text_block *spare;    /* blocks whose texts are all released, for reuse */
    long ndone;
    long npending;            /* cases neither finished nor handed out */
    long next;                /* hand-out: the next case index to look at */
    void (*poll)(void *arg);  /* called between cases by the threads that run them (NULL: none): rank 0
                                 serving the other ranks from its computing thread */
    void *poll_arg;
    FILE *ckpt;               /* checkpoint, appended to (NULL: none) */
    char *ckpt_buf;           /* its stream's buffer */
    int ckpt_failed;
    pthread_mutex_t lock;
} sweep_ledger;

/* Allocate a ledger of ncases cases of ncols values (no checkpoint).
 * CLI_EXIT_OK or CLI_EXIT_FAIL with a message; close it in any case. */
int cases_ledger_open(sweep_ledger *L, const char *cmd, long ncases, int ncols, cases_run_fn run, void *user);
/* Allocate for a sweep; with a checkpoint path, read its finished cases (resume = 1,
 * the file must be this sweep's) or create it (resume = 0: it must not
 * exist). tables: the texts formatted as cases are recorded (bit 0: CSV
 * row, bit 1: JSON object, bit 2: checkpoint line; SWEEP_CKPT_LINE), kept
 * for the tables or, without a checkpoint file here, for the report to
 * rank 0. With a checkpoint file the lines are formatted by the threads
 * that compute the cases whatever the bit. CLI_EXIT_OK or CLI_EXIT_FAIL
 * with a message. */
enum { SWEEP_CKPT_LINE = 4 };
int sweep_ledger_open(sweep_ledger *L, const sweep *s, const char *cmd, const char *ckpt, int resume,
                      unsigned tables);
/* The tables of sweep_ledger_write(csv, json) (bit 0: CSV, bit 1: JSON). */
unsigned sweep_tables(const char *csv, const char *json);
/* Record case i (thread-safe; a case recorded twice keeps the first). A
 * sweep's rows of the tables are formatted here, on the calling thread,
 * so that the threads and ranks that compute the cases format them too. */
void sweep_ledger_record(sweep_ledger *L, long i, int status, const double *row, const char *msg);
/* Record case i with its rows of the tables and its checkpoint line as
 * formatted elsewhere (by the rank that computed it): text[k] of len[k]
 * bytes (len 0: none). Its checkpoint line is appended but not flushed:
 * the caller flushes the lines of a report at once
 * (sweep_ledger_checkpoint_flush). */
void sweep_ledger_record_text(sweep_ledger *L, long i, int status, const double *row, const char *msg,
                              const char *const text[3], const size_t len[3]);
/* Flush the checkpoint's appended lines to the file (thread-safe). */
void sweep_ledger_checkpoint_flush(sweep_ledger *L);
/* Release the texts of cases idx[0..n-1] (idx NULL: first..first+n-1)
 * once they are written to the tables or sent to rank 0: their memory
 * holds the texts of later cases (thread-safe). */
void sweep_ledger_release(sweep_ledger *L, const long *idx, long first, long n);
/* Case i's row of result values (a recorded case that succeeded, its texts
 * not yet released). */
const double *sweep_ledger_row(const sweep_ledger *L, long i);
/* The first case from `from` on that is not recorded (ncases: none). */
long sweep_ledger_prefix(sweep_ledger *L, long from);
/* 1 if case i is recorded (thread-safe): a case handed out twice (the
 * chunks of a rank that may have died) need not be computed once the
 * other's result is in. */
int sweep_ledger_done(sweep_ledger *L, long i);
/* Up to n case indices not yet finished nor handed out, into idx, and
 * with share > 0 at most 1/share of those left (rounded up): toward the
 * end of a sweep the hand-outs shrink, so that share takers holding their
 * last cases finish at about the same time. With again = 1 and none left,
 * a case handed out but not finished (another worker's, which may have
 * died). The count taken. Thread-safe. */
int sweep_ledger_take(sweep_ledger *L, long *idx, int n, int again, int share);
/* On stderr: how many cases failed, and a checkpoint write failure. */
void sweep_ledger_report(const sweep_ledger *L, const char *cmd);
void sweep_ledger_close(sweep_ledger *L);
/* ---- the result tables (sweep_table.c) ---- */
/* Case i's row of the CSV table (with its newline) into csv and its object
 * of the JSON table into json (either NULL: not wanted); x: nvar scratch. */
void sweep_row_text(const sweep *s, long i, int status, const double *row, const char *msg, cli_buf *csv,
                    cli_buf *json, double *x);

/* The CSV and JSON tables being written: each to a temporary file that
 * replaces its destination only once it is complete (cli_atomic), or, the
 * CSV without a file, to a spool emitted on standard output at the end.
 * The rows go out in case order as soon as every case before them is
 * recorded (sweep_table_flush), so that little is left to write when the
 * last case is in. */
typedef struct sweep_table {
    const char *cmd, *spec;
    cli_atomic out[2];        /* CSV, JSON files */
    FILE *f[2];               /* where each table goes (NULL: not written) */
    FILE *spool;              /* the CSV for standard output */
    char *iobuf[2];           /* the streams' buffers */
    long next;                /* rows written */
    size_t unsynced[2];       /* bytes written since the last write-back request */
    cli_buf row;              /* a row formatted at writing (read from a checkpoint) */
    double *x;
    int err;                  /* errno of a failed write (0: none) */
    int err_k;                /* the table it failed on */
    int open;
} sweep_table;

/* Open the tables (csv, json: their files, NULL: not written; both NULL:
 * CSV on standard output) and write their heads. CLI_EXIT_OK, or
 * CLI_EXIT_FAIL with a message (nothing left behind); close it in any
 * case. */
int sweep_table_open(sweep_table *t, const sweep_ledger *L, const char *cmd, const char *spec, const char *csv,
                     const char *json);
/* Write the rows recorded since the last call, up to the first case not
 * yet recorded, and release their texts. Thread-safe against the
 * recording of cases; one caller at a time. */
void sweep_table_flush(sweep_table *t, sweep_ledger *L);
/* commit: every case is recorded; write the rest, the tails, and put the
 * files in place (CLI_EXIT_OK, or CLI_EXIT_FAIL with a message). Else
 * remove the temporary files. */
int sweep_table_close(sweep_table *t, sweep_ledger *L, int commit);

/* A sweep's cases_run_fn: the cases idx[0..n-1] on `threads` threads. */
void sweep_run_cases(sweep_ledger *L, const long *idx, long n, int threads);

/* ---- MPI (mpi/sweep_mpi.c, built where CMake finds MPI) ---- */
/* 1 when started by mpirun (its environment), else 0. */
int sweep_mpi_launched(void);

typedef struct sweep_opts {
    const char *spec, *ckpt, *csv, *json;
    int resume;
    int threads;              /* per rank (0: OpenMP's default) */
    int chunk;                /* cases per hand-out (0: the threads) */
    int serve_only;           /* rank 0 hands out only (with more than one rank) */
    int stats;                /* rank 0 prints the time and the hand-outs on stderr */
} sweep_opts;

/* The sweep on every rank: rank 0 hands out chunks of cases dynamically
 * and computes too; every rank computes on its threads. Returns the exit
 * status (rank 0: outputs written). */
int sweep_mpi_main(const char *cmd, const sweep_opts *o);

/* Any job of cases on every rank (what sweep_mpi_main runs): open fills
 * the ledger on every rank at once (the workers' messages held back, so
 * that a bad input is reported once, by rank 0), rank 0 hands out chunks of `chunk` cases (0: the
 * threads) and computes too (unless serve_only), finish writes the results
 * on rank 0 once every case is recorded, close releases the job on every
 * rank (ok: rank 0 finished and wrote). */
typedef struct cases_job {
    void *user;
    int threads, chunk, serve_only, stats;
    int (*open)(void *user, const char *cmd, int rank, sweep_ledger *L);
    int (*finish)(void *user, const char *cmd, sweep_ledger *L);
    void (*close)(void *user, int rank, sweep_ledger *L, int ok);
    /* rank 0, between the reports it receives (NULL: nothing): the job's
     * use of the cases recorded so far (a sweep writes its tables' rows) */
    void (*progress)(void *user, sweep_ledger *L);
    int polls;                /* the job's runs call the ledger's poll between cases (sweep_run_cases) */
} cases_job;
int cases_mpi_main(const char *cmd, const cases_job *job);

#endif
