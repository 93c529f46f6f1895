/*
 * test_cli_options.c - the option tables of the commands against their
 * usage texts: every option of a table (long and short name) appears in
 * the usage text of its command, and every --option the usage text shows
 * is in the table (or is --help, or an option of another program that the
 * text names: `others` below). An option whose metavariable in the usage
 * text is one capital letter (--samples N, --tol T) takes a number, which
 * its row checks (a numeric kind, not a string the command reads by hand).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"

static int failures;

/* name occurs in text as a whole word (not inside a longer option). */
static int has_word(const char *text, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        const char before = p == text ? ' ' : p[-1], after = p[n];
        const int starts = !(before == '-' || (before >= 'a' && before <= 'z'));
        const int ends = !(after == '-' || (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9'));
        if (starts && ends) return 1;
    }
    return 0;
}

/* Options of other programs that a usage text names. */
static const struct {
    const char *command, *option, *whose;
} others[] = {
    { "sweep", "--enable-recovery", "mpirun's" },
    { "view", "--json", "mbsens sensitivity's (the file it reads)" },
};

/* Options with a one-letter metavariable whose row reads a string: P of
 * --plot-point is a point's name; the others are numbers their commands
 * still read by hand (cli_parse_long, strtod), to become numeric rows. */
static const struct {
    const char *command, *option;
} string_rows[] = {
    { "optimize", "--plot-point" },
    { "assemble", "--t" },
    { "sensitivity", "--threads" },
    { "optimize", "--threads" },
    { "optimize", "--multistart" },
    { "optimize", "--seed" },
};

static int string_row_known(const cli_command *c, const char *name)
{
    for (size_t k = 0; k < sizeof string_rows / sizeof string_rows[0]; k++)
        if (!strcmp(string_rows[k].command, c->name) && !strcmp(string_rows[k].option, name)) return 1;
    return 0;
}

static int in_table(const cli_command *c, const char *name, size_t len)
{
    if (len == 6 && strncmp(name, "--help", 6) == 0) return 1;
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
        if (!strcmp(others[k].command, c->name) && strlen(others[k].option) == len &&
            !strncmp(others[k].option, name, len))
            return 1;
    for (int k = 0; k < c->nopts; k++)
        if (strlen(c->opts[k].name) == len && strncmp(c->opts[k].name, name, len) == 0) return 1;
    return 0;
}

/* The metavariable after name in text is one capital letter: "--n N". */
static int number_metavar(const char *text, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        const char *v = p + n;
        if ((p == text || p[-1] == ' ' || p[-1] == '[') && (*v == ' ' || *v == '=') && v[1] >= 'A' &&
            v[1] <= 'Z' && (v[2] == ' ' || v[2] == ']' || v[2] == '\n'))
            return 1;
    }
    return 0;
}

static void check_command(const cli_command *c)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (!mem) {
        printf("FAIL %s: open_memstream\n", c->name);
        failures++;
        return;
    }
    c->usage(mem);
    fclose(mem);
    int nopt = 0;
    for (int k = 0; k < c->nopts; k++) {
        const cli_opt *o = &c->opts[k];
        if (!has_word(text, o->name) || (o->short_name && !has_word(text, o->short_name))) {
            printf("FAIL %s: %s%s%s is not in the usage text\n", c->name, o->name, o->short_name ? ", " : "",
                   o->short_name ? o->short_name : "");
            failures++;
        }
        if (o->kind == CLI_STRING && number_metavar(text, o->name) && !string_row_known(c, o->name)) {
            printf("FAIL %s: %s takes a number (usage text) but its row reads a string\n", c->name, o->name);
            failures++;
        }
    }
    /* every "--name" of the text */
    for (const char *p = strstr(text, "--"); p; p = strstr(p, "--")) {
        size_t len = 2;
        while ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9') || p[len] == '-') len++;
        if (len > 2 && (p == text || p[-1] != '-')) {
            nopt++;
            if (!in_table(c, p, len)) {
                printf("FAIL %s: the usage text shows %.*s, which is not in the table\n", c->name, (int)len, p);
                failures++;
            }
        }
        p += len;
    }
    printf("%-12s %2d table rows, %3d options named in the usage text\n", c->name, c->nopts, nopt);
    free(text);
}

int main(void)
{
    int n = 0;
    for (const cli_command *const *c = cli_commands; *c; c++, n++) check_command(*c);
    if (n == 0) {
        printf("FAIL: no command has a table\n");
        failures++;
    }
    printf("%s: %d commands, %d failures\n", failures ? "FAIL" : "ok", n, failures);
    return failures != 0;
}
