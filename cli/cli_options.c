/*
 * cli_options.c - cli_parse: a command line read by the command's table
 * of options (cli_options.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_util.h"

enum { MAX_OPTS = 64 };

const cli_command *const cli_commands[] = {
    &cli_info_command,
    &cli_kinematics_command,
    &cli_inverse_command,
    &cli_generate_command,
    &cli_simulate_command,
    &cli_check_command,
    &cli_assemble_command,
    &cli_convert_command,
    &cli_sensitivity_command,
    &cli_optimize_command,
    &cli_sweep_command,
    &cli_view_command,
    NULL,
};

static const cli_opt *find_opt(const cli_command *c, const char *arg, size_t len)
{
    for (int k = 0; k < c->nopts; k++) {
        const char *l = c->opts[k].name, *s = c->opts[k].short_name;
        if ((l && strlen(l) == len && strncmp(l, arg, len) == 0) ||
            (s && strlen(s) == len && strncmp(s, arg, len) == 0))
            return &c->opts[k];
    }
    return NULL;
}

static int unknown_opt(const cli_command *c, const char *arg, size_t len)
{
    const char *names[MAX_OPTS + 1];
    int n = 0;
    for (int k = 0; k < c->nopts && n < MAX_OPTS; k++)
        names[n++] = c->opts[k].name;
    names[n++] = "--help";
    const char *near = cli_nearest(arg, len, names, n);
    if (near)
        return cli_usage_error(c->name, c->usage, "unknown option '%.*s' (did you mean '%s'?)", (int)len, arg,
                               near);
    return cli_usage_error(c->name, c->usage, "unknown option '%.*s'", (int)len, arg);
}

/* Every field at its "absent" value. */
static void clear_fields(const cli_command *c, char *args)
{
    for (int k = 0; k < c->nopts; k++) {
        const cli_opt *o = &c->opts[k];
        void *f = args + o->offset;
        switch (o->kind) {
        case CLI_FLAG: *(int *)f = 0; break;
        case CLI_STRING: *(const char **)f = NULL; break;
        case CLI_NUMBER:
        case CLI_POSITIVE:
        case CLI_NONNEG: *(double *)f = NAN; break;
        case CLI_COUNT: *(long *)f = 0; break;
        case CLI_UNSIGNED: *(cli_ulong *)f = (cli_ulong){ 0, 0 }; break;
        case CLI_NAME: *(int *)f = -1; break;
        }
    }
}

/* The options and positional arguments as texts: text[k] for row k. */
static int read_argv(const cli_command *c, int argc, char **argv, char *args, const char **text,
                     const char **pos, int *npos)
{
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (*npos >= c->max_pos) return cli_usage_error(c->name, c->usage, "unexpected argument '%s'", a);
            pos[(*npos)++] = a;
            continue;
        }
        const char *eq = (a[1] == '-') ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt *o = find_opt(c, a, len);
        if (!o) return unknown_opt(c, a, len);
        if (o->kind == CLI_FLAG) {
            if (eq) return cli_usage_error(c->name, c->usage, "option '%.*s' takes no value", (int)len, a);
            *(int *)(args + o->offset) = 1;
        } else if (eq) {
            text[o - c->opts] = eq + 1;
        } else {
            if (i + 1 >= argc) return cli_usage_error(c->name, c->usage, "option '%s' needs a value", a);
            text[o - c->opts] = argv[++i];
        }
    }
    return CLI_EXIT_OK;
}

/* A number of the kind of o, in the words of c. */
static int read_number(const cli_command *c, const cli_opt *o, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (c->words == CLI_WORDS_VALUE) {
        while (*end == ' ' || *end == '\t') end++;
        if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
            return cli_usage_error(c->name, c->usage, "%s: invalid number '%s'", o->name, s);
        if (o->kind == CLI_POSITIVE && !(v > 0))
            return cli_usage_error(c->name, c->usage, "%s: must be > 0, got %s", o->name, s);
        if (o->kind == CLI_NONNEG && !(v >= 0))
            return cli_usage_error(c->name, c->usage, "%s: must be >= 0, got %s", o->name, s);
    } else {
        const char *what = o->kind == CLI_POSITIVE ? "a positive number"
                           : o->kind == CLI_NONNEG ? "a number >= 0" : "a number";
        if (*end || end == s || !isfinite(v) || (o->kind == CLI_POSITIVE && !(v > 0)) ||
            (o->kind == CLI_NONNEG && !(v >= 0)))
            return cli_usage_error(c->name, c->usage, "%s: expected %s, got '%s'", o->name, what, s);
    }
    *out = v;
    return CLI_EXIT_OK;
}

static int read_count(const cli_command *c, const cli_opt *o, const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (c->words == CLI_WORDS_RANGE && !o->expected) {
        if (end == s || *end != '\0' || errno == ERANGE || v < INT_MIN || v > INT_MAX)
            return cli_usage_error(c->name, c->usage, "%s: invalid integer '%s'", o->name, s);
        if (v < o->min || v > o->max)
            return cli_usage_error(c->name, c->usage, "%s: %ld out of range [%ld, %ld]", o->name, v, o->min,
                                   o->max);
    } else if (end == s || *end != '\0' || errno == ERANGE || v < o->min || v > o->max) {
        if (o->expected)
            return cli_usage_error(c->name, c->usage, "%s: expected %s, got '%s'", o->name, o->expected, s);
        if (c->words == CLI_WORDS_VALUE)
            return cli_usage_error(c->name, c->usage, "%s: expected an integer between 1 and %ld, got '%s'",
                                   o->name, o->max, s);
        return cli_usage_error(c->name, c->usage, "%s: expected a positive integer, got '%s'", o->name, s);
    }
    *out = v;
    return CLI_EXIT_OK;
}

/* An unsigned long written as digits alone (strtoul would take a sign and
 * wrap a negative number round). */
static int read_unsigned(const cli_command *c, const cli_opt *o, const char *s, cli_ulong *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || !s[0] || errno == ERANGE || strchr(s, '-'))
        return cli_usage_error(c->name, c->usage, "%s: expected %s, got '%s'", o->name,
                               o->expected ? o->expected : "a non-negative integer", s);
    *out = (cli_ulong){ 1, v };
    return CLI_EXIT_OK;
}

static int read_value(const cli_command *c, const cli_opt *o, const char *s, char *args)
{
    void *f = args + o->offset;
    switch (o->kind) {
    case CLI_FLAG: return CLI_EXIT_OK;
    case CLI_STRING: *(const char **)f = s; return CLI_EXIT_OK;
    case CLI_NUMBER:
    case CLI_POSITIVE:
    case CLI_NONNEG: return read_number(c, o, s, f);
    case CLI_COUNT: return read_count(c, o, s, f);
    case CLI_UNSIGNED: return read_unsigned(c, o, s, f);
    case CLI_NAME: {
        int k = o->from_name(s);
        if (k >= 0) {
            *(int *)f = k;
            return CLI_EXIT_OK;
        }
        if (c->words == CLI_WORDS_VALUE)
            return cli_usage_error(c->name, c->usage, "%s: unknown value '%s' (expected %s)", o->name, s,
                                   o->expected);
        if (c->words == CLI_WORDS_RANGE)
            return cli_usage_error(c->name, c->usage, "%s: '%s' is not supported (%s)", o->name, s, o->expected);
        return cli_usage_error(c->name, c->usage, "%s: expected %s, got '%s'", o->name, o->expected, s);
    }
    }
    return CLI_EXIT_OK;
}

static int given(const cli_command *c, const char **text, const char *args, const char *name)
{
    for (int k = 0; k < c->nopts; k++)
        if (strcmp(c->opts[k].name, name) == 0)
            return c->opts[k].kind == CLI_FLAG ? *(const int *)(args + c->opts[k].offset) : text[k] != NULL;
    return 0;
}

int cli_parse(const cli_command *c, int argc, char **argv, void *args, const char **pos, int *npos)
{
    const char *text[MAX_OPTS] = { 0 };
    char *fields = args;
    *npos = 0;
    if (c->nopts > MAX_OPTS) {
        cli_error(c->name, "the command has more than %d options", MAX_OPTS);
        return CLI_EXIT_FAIL;
    }
    clear_fields(c, fields);
    /* --help wins over everything else, wherever it is. */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            c->usage(stdout);
            return CLI_PARSE_HELP;
        }
    int rc = read_argv(c, argc, argv, fields, text, pos, npos);
    if (rc != CLI_EXIT_OK) return rc;
    if (*npos < c->min_pos) return cli_usage_error(c->name, c->usage, "%s", c->missing);
    for (int k = 0; k < c->npairs; k++)
        if (given(c, text, fields, c->pairs[k].a) && given(c, text, fields, c->pairs[k].b))
            return cli_usage_error(c->name, c->usage, "%s", c->pairs[k].message);
    for (int k = 0; k < c->nopts; k++)
        if (text[k] && (rc = read_value(c, &c->opts[k], text[k], fields)) != CLI_EXIT_OK) return rc;
    return CLI_EXIT_OK;
}
