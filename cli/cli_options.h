/*
 * cli_options.h - the options of a command as one declarative table.
 *
 * Each row names an option, says what kind of value it takes and where
 * in the command's options struct the value goes. cli_parse reads the
 * command line into that struct, checks the values and prints the usage
 * messages; the command then applies the options present.
 *
 * The field of an absent option holds its "absent" value: NULL (string),
 * 0 (flag, count), NAN (numbers), -1 (names); cli_given() tells a number
 * apart.
 */
#ifndef MBS_CLI_OPTIONS_H
#define MBS_CLI_OPTIONS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

typedef enum cli_kind {
    CLI_FLAG,       /* int: 1 when given; takes no value */
    CLI_STRING,     /* const char *: the text as given */
    CLI_NUMBER,     /* double: any finite number */
    CLI_POSITIVE,   /* double > 0 */
    CLI_NONNEG,     /* double >= 0 */
    CLI_COUNT,      /* long: an integer in [1, max] */
    CLI_NAME        /* int: from_name(text), which is >= 0 for a known name */
} cli_kind;

typedef struct cli_opt {
    const char *name;                  /* "--dt" */
    const char *short_name;            /* "-o", or NULL */
    cli_kind kind;
    size_t offset;                     /* of the field in the command's options struct */
    int (*from_name)(const char *);    /* CLI_NAME */
    const char *expected;              /* CLI_NAME: the known names for the message, "com, origin or joint" */
    long max;                          /* CLI_COUNT: the largest value */
} cli_opt;

/* Rows. T is the command's options struct, F a field of it (nested
 * fields allowed: sim.dt). */
#define CLI_ROW(T, NAME, SHORT, KIND, F) { NAME, SHORT, KIND, offsetof(T, F), NULL, NULL, 0 }
#define CLI_ROW_NAME(T, NAME, F, FROM_NAME, EXPECTED) { NAME, NULL, CLI_NAME, offsetof(T, F), FROM_NAME, EXPECTED, 0 }
#define CLI_ROW_COUNT(T, NAME, F, MAX) { NAME, NULL, CLI_COUNT, offsetof(T, F), NULL, NULL, MAX }

/* Two options that exclude each other, and the message when both are
 * given: "--every and --output-dt: give one of them". */
typedef struct cli_pair {
    const char *a, *b;
    const char *message;
} cli_pair;

/* How a bad value is reported (each command has its own wording):
 *   CLI_WORDS_EXPECTED  "--dt: expected a positive number, got 'x'",
 *                       "--ref: expected com, origin or joint, got 'x'";
 *                       a number is the whole text.
 *   CLI_WORDS_VALUE     "--dt: invalid number 'x'", "--dt: must be > 0, got 0",
 *                       "--ref: unknown value 'x' (expected com, origin or joint)",
 *                       "--every: expected an integer between 1 and N, got 'x'";
 *                       a number may be followed by blanks, and one out of
 *                       the range of a double is invalid. */
typedef enum cli_words { CLI_WORDS_EXPECTED, CLI_WORDS_VALUE } cli_words;

typedef struct cli_command {
    const char *name;              /* "simulate" */
    void (*usage)(FILE *);         /* the --help text */
    const cli_opt *opts;
    int nopts;
    const cli_pair *pairs;
    int npairs;
    int max_pos;                   /* positional arguments at most */
    int min_pos;                   /* and at least; fewer: `missing` */
    const char *missing;           /* "missing MODEL argument" */
    cli_words words;
} cli_command;

#define CLI_NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Parse argv[1..argc-1] (argv[0] is the command name) into *args by the
 * table of c: options before or after the positional arguments, as "--opt
 * value" or "--opt=value"; "--" ends the options; "-h"/"--help" anywhere
 * prints the usage to stdout and returns CLI_PARSE_HELP. Then, in this
 * order, each reported as a usage error (message, the one-line usage, the
 * hint; CLI_EXIT_USAGE): an unknown option (with the nearest name when one
 * is near), a value missing or given to a flag, too many or too few
 * positional arguments, both options of an exclusive pair, a bad value
 * (rows in table order). Otherwise CLI_EXIT_OK with the positional
 * arguments in pos[0..*npos-1]. */
int cli_parse(const cli_command *c, int argc, char **argv, void *args, const char **pos, int *npos);

/* A number field holding a value from the command line. */
static inline int cli_given(double x) { return !isnan(x); }

/* The tables of the commands (cmd_*.c), and all of them in one
 * NULL-terminated list (for the test that compares them with the usage
 * texts). */
extern const cli_command cli_info_command, cli_kinematics_command, cli_inverse_command, cli_generate_command,
    cli_simulate_command, cli_check_command, cli_assemble_command, cli_convert_command, cli_sensitivity_command,
    cli_optimize_command, cli_sweep_command, cli_view_command;
extern const cli_command *const cli_commands[];

#endif
