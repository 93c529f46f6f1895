/*
 * main.c - the mbsens command: dispatch to the subcommands (cmd_*.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "summary of a model: bodies, joints, coordinates, points, parameters"},
    {"kinematics", cmd_kinematics, "positions, velocities, accelerations of bodies and points"},
    {"inverse", cmd_inverse, "inverse dynamics: generalized forces tau for q, qd, qdd"},
    {"generate", cmd_generate, "write a generated benchmark model (spatial chain)"},
    {"simulate", cmd_simulate, "forward-dynamics simulation: trajectory as CSV"},
    {"check", cmd_check, "verify the analytical derivatives against complex step"},
    {"assemble", cmd_assemble, "the initial state of a run: closed loops assembled, velocities solved"},
    {"convert", cmd_convert, "write a model (URDF or JSON) as a JSON model or MuJoCo MJCF"},
    {"sensitivity", cmd_sensitivity, "objectives and their gradients over a simulation (DDM, adjoints, FD)"},
    {"optimize", cmd_optimize, "design optimization and optimal control (NLopt, analytical gradients)"},
    {"sweep", cmd_sweep, "one computation per case of a parameter sweep, on threads or MPI ranks"},
    {"view", cmd_view, "write an HTML page showing a model, a run and a gradient (3D, plots)"},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *out)
{
    fputs("Usage: mbsens COMMAND [ARGUMENTS] [OPTIONS]\n"
          "       mbsens --help | --version\n"
          "       mbsens help COMMAND\n"
          "\n"
          "Recursive multibody dynamics with analytical sensitivities.\n"
          "\n"
          "Commands:\n", out);
    for (int k = 0; k < NCOMMANDS; k++)
        fprintf(out, "  %-12s %s\n", commands[k].name, commands[k].summary);
    fputs("\n"
          "Options:\n"
          "  -h, --help     show this help and exit\n"
          "  -V, --version  show the version and exit\n"
          "\n"
          "Run 'mbsens COMMAND --help' for the arguments and options of a command.\n"
          "Exit status: 0 success, 1 failure (model, numerical or I/O error),\n"
          "2 invalid command line. See docs/cli.md.\n", out);
}

static int unknown_command(const char *name)
{
    const char *names[NCOMMANDS + 1];
    for (int k = 0; k < NCOMMANDS; k++)
        names[k] = commands[k].name;
    names[NCOMMANDS] = "help";
    const char *near = cli_nearest(name, strlen(name), names, NCOMMANDS + 1);
    if (near)
        return cli_usage_error(NULL, usage, "unknown command '%s' (did you mean '%s'?)", name, near);
    return cli_usage_error(NULL, usage, "unknown command '%s'", name);
}

static const command *find_command(const char *name)
{
    for (int k = 0; k < NCOMMANDS; k++)
        if (strcmp(commands[k].name, name) == 0)
            return &commands[k];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(NULL, usage, "no command given");
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("mbsens %s\n", mbs_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (argc > 3)
            return cli_usage_error(NULL, usage, "help: unexpected argument '%s'", argv[3]);
        const command *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        char help[] = "--help";
        char *hargv[] = {argv[2], help, NULL};
        return c->run(2, hargv);
    }
    if (name[0] == '-') {
        const char *opts[] = {"--help", "--version"};
        const char *near = cli_nearest(name, strlen(name), opts, 2);
        if (near)
            return cli_usage_error(NULL, usage, "unknown option '%s' (did you mean '%s'?)", name, near);
        return cli_usage_error(NULL, usage, "unknown option '%s'", name);
    }
    const command *c = find_command(name);
    if (!c)
        return unknown_command(name);
    return c->run(argc - 1, argv + 1);
}
