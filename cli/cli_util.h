/*
 * cli_util.h - shared helpers of the mbsens command: usage messages, value
 * lists, an in-memory output buffer (so that nothing is printed when a
 * command fails half-way) and JSON/text formatting.
 *
 * The command uses only the public API (mbsens/mbsens.h).
 */
#ifndef MBS_CLI_UTIL_H
#define MBS_CLI_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "mbsens/mbsens.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit statuses. */
enum {
    CLI_EXIT_OK = 0,      /* success (also --help) */
    CLI_EXIT_FAIL = 1,    /* model, numerical or I/O failure */
    CLI_EXIT_USAGE = 2    /* invalid command line */
};

/* Result of cli_parse() (cli_options.h) besides CLI_EXIT_OK and
 * CLI_EXIT_USAGE. */
#define CLI_PARSE_HELP (-1)

/* ---- commands (cmd_*.c); argv[0] is the command name ---- */
int cmd_info(int argc, char **argv);
int cmd_kinematics(int argc, char **argv);
int cmd_inverse(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_assemble(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_sensitivity(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

/* ---- messages ---- */
/* "mbsens CMD: error: ..." on stderr (CMD may be NULL). */
void cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Hold the messages of cli_error back (in memory) until
 * cli_release_messages prints them (print = 1) or drops them: an MPI
 * worker rank checking its inputs while rank 0 checks and reports the
 * same ones. Main thread only. */
void cli_hold_messages(void);
void cli_release_messages(int print);

/* ---- output buffer ---- */
typedef struct cli_buf {
    char *s;
    size_t len, cap;
    int oom;    /* an allocation failed; the content is incomplete */
} cli_buf;

void cli_buf_printf(cli_buf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_buf_puts(cli_buf *b, const char *s);
void cli_buf_free(cli_buf *b);
/* Write the buffer to `out` and flush. On failure (including an earlier
 * allocation failure) prints an error for `cmd` and returns CLI_EXIT_FAIL,
 * otherwise CLI_EXIT_OK. */
int cli_buf_emit(cli_buf *b, FILE *out, const char *cmd);

/* JSON pieces. Numbers with the fewest digits (15 to 17) that read back
 * exactly (shortest.h); non-finite numbers become null. */
void cli_json_str(cli_buf *b, const char *s);
void cli_json_num(cli_buf *b, double x);
void cli_json_vec(cli_buf *b, const double *x, int n);
/* 3x3 row-major matrix as [[..], [..], [..]] */
void cli_json_mat3(cli_buf *b, const double A[9]);
/* Coordinate names of the model as a JSON array of strings. */
void cli_json_coord_names(cli_buf *b, const mbs_model *m);
/* The velocity names of m as a JSON array (mbs_vel_name). */
void cli_json_vel_names(cli_buf *b, const mbs_model *m);

/* A whole JSON document (jansson's json_t, passed as void * so that this
 * header needs no jansson) as text for reading and diffs: the shortest
 * numbers that read back, members in order, indentation of 2, arrays of
 * scalars on one line when they fit in 100 columns; a final newline. */
void cli_json_write(cli_buf *b, void *doc);
/* The model as JSON text in that form (mbs_model_to_json, re-written by
 * cli_json_write) into b: 0, or -1 with a message for `cmd` prefixed by
 * `what` ("" for none). */
int cli_model_json(const char *cmd, const char *what, const mbs_model *m, cli_buf *b);

/* A CSV header field: the name as it is, or in double quotes (inner
 * quotes doubled, RFC 4180) when it holds a comma, a quote, a line break
 * or a leading or trailing blank. */
void cli_csv_name(cli_buf *b, const char *name);

/* Text pieces: "[ x y z ]" with % .6e. */
void cli_text_vec(cli_buf *b, const double *x, int n);

/* ---- output files ----
 * FILE (its symbolic links followed to the end) is
 *   - a regular file, or none: the output goes to a temporary file
 *     .BASE.XXXXXX in FILE's directory, with the mode (and, where
 *     permitted, the owner) of the file it replaces (new files:
 *     0666 & ~umask, like fopen), which is flushed, synced and renamed over
 *     FILE only when everything succeeded: a failed or interrupted command
 *     leaves no half-written file and an existing FILE untouched (the
 *     temporary file is also removed on SIGINT, SIGTERM, SIGHUP, SIGQUIT
 *     and SIGPIPE while it is open; up to two such files at a time). A symbolic
 *     link stays a link: its destination is replaced.
 *   - a character or block device or a FIFO: written to as it is (nothing
 *     can replace it atomically; a failure may leave part of the output
 *     there).
 *   - a directory or a socket: refused.
 * FILE may not be the input model (same file, by device and inode). */
typedef struct cli_atomic {
    FILE *f;             /* open for writing: the temporary file, or the device or FIFO */
    char *tmp;           /* the temporary file's path (NULL when writing straight through) */
    char *target;        /* FILE, its links followed */
    const char *path;    /* FILE as given (messages) */
} cli_atomic;

/* 0, or -1 with a message for `cmd` (nothing left behind). input: the
 * model the command read, or NULL. */
int cli_atomic_open(cli_atomic *a, const char *cmd, const char *path, const char *input);
/* The checks of cli_atomic_open without opening anything (before a long
 * run whose output is written at its end): 0, or -1 with a message. */
int cli_output_check(const char *cmd, const char *path, const char *input);
/* Flush, sync, close and rename over the target: 0, or -1 with a message
 * for `cmd` (what: the option or "" to name in it) and the temporary file
 * removed. */
int cli_atomic_commit(cli_atomic *a, const char *cmd, const char *what);
/* Close and remove the temporary file (after a failure). */
void cli_atomic_abort(cli_atomic *a);
/* The whole text at once: open, write, commit. 0 or -1 (message printed). */
int cli_write_atomic(const char *cmd, const char *what, const char *path, const char *input, const char *text,
                     size_t len);

/* ---- spooled standard output ----
 * Output too large to hold in memory goes to an unnamed temporary file in
 * $TMPDIR (default /tmp; unlinked at once, so that nothing is left behind
 * whatever happens) and is copied to standard output when the command has
 * succeeded: nothing is printed on failure, and memory use does not grow
 * with the output. */
/* The temporary file, open for writing and reading; NULL with a message. */
FILE *cli_spool_open(const char *cmd);
/* Copy it to `out` and close it: CLI_EXIT_OK, or CLI_EXIT_FAIL with a message. */
int cli_spool_emit(FILE *spool, FILE *out, const char *cmd);

/* ---- usage messages (options: cli_options.h) ---- */
/* Print "mbsens CMD: error: MESSAGE", the one-line usage (the first line
 * of `usage` up to its first option, then " [OPTIONS]") and "See 'mbsens
 * CMD --help'." to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
    CLI_PRINTF(3, 4);

/* TEXT, the value of option OPT, as an integer in [lo, hi] into *out;
 * else the usage error "OPT: expected an integer from LO to HI, got
 * 'TEXT'" (CLI_EXIT_USAGE). */
int cli_parse_long(const char *cmd, void (*usage)(FILE *), const char *opt, const char *text, long lo, long hi,
                   long *out);
/* The last two lines of cli_usage_error alone (after a message of several
 * lines printed by the caller). usage may be NULL. */
void cli_usage_hint(const char *cmd, void (*usage)(FILE *));
/* The name of names[0..n-1] nearest to word[0..len) (leading dashes
 * ignored), or NULL when none is near: a name that word begins, or one
 * within about one edit in four characters (Damerau-Levenshtein). */
const char *cli_nearest(const char *word, size_t len, const char *const *names, int n);

/* What the values of a list are, for the count message: plain numbers,
 * one per coordinate of the model or one per velocity (with their names). */
typedef enum { CLI_VALUES_PLAIN, CLI_VALUES_COORDS, CLI_VALUES_VELS } cli_values_kind;

/* Parse a comma-separated list of exactly `n` finite numbers into out.
 * On error prints a message naming the option, the bad token, or the
 * expected and actual counts (with the coordinate or velocity names of m
 * for those kinds), then the hint of cli_usage_hint, and returns
 * CLI_EXIT_USAGE; otherwise CLI_EXIT_OK. */
int cli_parse_values(const char *cmd, const char *opt, const char *text, const mbs_model *m,
                     cli_values_kind kind, double *out, int n, void (*usage)(FILE *));

/* The velocity convention of --velocities: "tangent" or "euler-rates"
 * ("euler_rates" as in the model format): an mbs_velocities, or -1. */
int cli_velocities_from_name(const char *name);

/* Load a model; on failure prints the library's message and returns NULL. */
mbs_model *cli_load_model(const char *cmd, const char *path);

/* ---- progress on a terminal ----
 * Long runs show their progress on standard error when it is a terminal,
 * after a delay of 2 s, or of $MBS_PROGRESS_DELAY seconds when set (0:
 * at once). */
double cli_progress_delay(void);

/* ---- initial state ----
 * What a run does to the model's q0, qd0 before its first step: Euler
 * parameters normalized, and with a closed-loop formulation (cut joints or
 * drivers) q assembled and qd from the velocity problem at t0 with the
 * model's "assembly" settings, which sets qd0 to zero unless the model
 * lists the coordinates whose speed it gives in "assembly.fixed". */
typedef struct cli_initial_change {
    int closed;          /* assembled (closed-loop formulation) */
    double dq, dqd;      /* max |q - q0|, max |qd - qd0| */
    int iq, iqd;         /* coordinates of those maxima (-1: nothing changed) */
    int qd_zeroed;       /* qd0 had a non-zero speed and qd is zero */
    double tol;          /* the model's assembly tolerance: changes above it are announced */
} cli_initial_change;

/* Evaluate on a copy (the run reports its own failures: a state that does
 * not assemble leaves *ch at "nothing changed"). CLI_EXIT_OK, or
 * CLI_EXIT_FAIL (out of memory) with a message. */
int cli_initial_change_eval(const char *cmd, const mbs_model *m, double t0, mbs_loop_formulation loop,
                            cli_initial_change *ch);
/* A change above the assembly tolerance, or qd0 zeroed. */
int cli_initial_change_matters(const cli_initial_change *ch);
/* "mbsens CMD: note: ..." lines for a change that matters (nothing otherwise). */
void cli_initial_change_note(FILE *out, const char *cmd, const mbs_model *m, const cli_initial_change *ch);
/* The "  initial state ..." line of a run summary (closed loops, or a
 * changed state). */
void cli_initial_change_summary(FILE *out, const mbs_model *m, const cli_initial_change *ch);
/* A JSON object {"assembled", "q_change", "q_change_at", "qd_change",
 * "qd_change_at", "qd_zeroed"}. */
void cli_initial_change_json(cli_buf *b, const mbs_model *m, const cli_initial_change *ch);

#endif
