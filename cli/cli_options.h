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
    CLI_COUNT,      /* long: an integer in [min, max] */
    CLI_UNSIGNED,   /* cli_ulong: an unsigned long, written without a sign */
    CLI_NAME        /* int: from_name(text), which is >= 0 for a known name */
} cli_kind;

/* The field of a CLI_UNSIGNED option (every value is valid, so `given`
 * tells an absent one apart). */
typedef struct cli_ulong {
    int given;
    unsigned long value;
} cli_ulong;

typedef struct cli_opt {
    const char *name;                  /* "--dt" */
    const char *short_name;            /* "-o", or NULL */
    cli_kind kind;
    size_t offset;                     /* of the field in the command's options struct */
    int (*from_name)(const char *);    /* CLI_NAME */
    const char *expected;              /* CLI_NAME: the known names for the message, "com, origin or joint";
                                        * CLI_COUNT, CLI_UNSIGNED: what a value must be, "an integer in
                                        * 1..100000" (NULL: the words of the command) */
    long max;                          /* CLI_COUNT: the largest value */
    long min;                          /* CLI_COUNT: the smallest value */
} cli_opt;

/* Rows. T is the command's options struct, F a field of it (nested
 * fields allowed: sim.dt). */
#define CLI_ROW(T, NAME, SHORT, KIND, F) { NAME, SHORT, KIND, offsetof(T, F), NULL, NULL, 0, 0 }
#define CLI_ROW_NAME(T, NAME, F, FROM_NAME, EXPECTED) { NAME, NULL, CLI_NAME, offsetof(T, F), FROM_NAME, EXPECTED, 0, 0 }
#define CLI_ROW_COUNT(T, NAME, F, MAX) { NAME, NULL, CLI_COUNT, offsetof(T, F), NULL, NULL, MAX, 1 }
/* an integer in [MIN, MAX]; EXPECTED: the words of its message, or NULL */
#define CLI_ROW_RANGE(T, NAME, F, MIN, MAX, EXPECTED) { NAME, NULL, CLI_COUNT, offsetof(T, F), NULL, EXPECTED, MAX, MIN }
#define CLI_ROW_UNSIGNED(T, NAME, F, EXPECTED) { NAME, NULL, CLI_UNSIGNED, offsetof(T, F), NULL, EXPECTED, 0, 0 }

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
 *                       the range of a double is invalid.
 *   CLI_WORDS_RANGE     "--n: invalid integer 'x'" (not an int),
 *                       "--n: 300 out of range [2, 256]",
 *                       "--joint: 'x' is not supported (revolute, cardan or spherical)".
 * A row's own `expected` words replace those of a count or unsigned
 * value: "--samples: expected an integer in 1..100000, got 'x'". */
typedef enum cli_words { CLI_WORDS_EXPECTED, CLI_WORDS_VALUE, CLI_WORDS_RANGE } cli_words;

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
