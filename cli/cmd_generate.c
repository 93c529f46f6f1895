/*
 * cmd_generate.c - `mbsens generate chain --n N --joint TYPE [--floating]
 * [-o FILE]`: write a generated benchmark model.
 *
 * The file is written to a temporary file in the same directory and renamed
 * over FILE, so a failure never leaves a half-written FILE behind.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens generate chain --n N --joint revolute|cardan|spherical\n"
          "                       [--floating] [-o FILE]\n"
          "\n"
          "Write a generated model (docs/model-format.md). 'chain' is a spatial\n"
          "serial chain of N links (2 <= N <= 256): boxes of 0.3 m with distinct\n"
          "masses of about 1 kg and full inertia tensors, joint axes alternating\n"
          "between two directions, named points 'base' and 'tip' on every link,\n"
          "a non-zero initial state, gravity [0, 0, -9.81], and the parameters\n"
          "'m1' (mass of link1) and 'L1' (length of link1). See mbsens/generate.h.\n"
          "\n"
          "Options:\n"
          "  --n N              number of links, 2..256\n"
          "  --joint TYPE       revolute, cardan or spherical\n"
          "  --floating         attach link1 to the ground by a floating joint\n"
          "                     (7 coordinates) instead of a joint of TYPE\n"
          "  -o, --output FILE  output file (default or '-': standard output);\n"
          "                     written atomically (temporary file and rename)\n"
          "  -h, --help         show this help and exit\n", out);
}

/* The joint types of a generated chain: the type, or -1. */
static int chain_joint_from_name(const char *name)
{
    const int jt = mbs_joint_type_from_name(name);
    return jt == MBS_JOINT_REVOLUTE || jt == MBS_JOINT_CARDAN || jt == MBS_JOINT_SPHERICAL ? jt : -1;
}

typedef struct {
    long n;
    int joint;
    const char *out;
    int floating;
} gen_args;

static const cli_opt generate_opts[] = {
    CLI_ROW_RANGE(gen_args, "--n", n, MBS_GENERATE_CHAIN_MIN_LINKS, MBS_GENERATE_CHAIN_MAX_LINKS, NULL),
    CLI_ROW_NAME(gen_args, "--joint", joint, chain_joint_from_name, "revolute, cardan or spherical"),
    CLI_ROW(gen_args, "--floating", NULL, CLI_FLAG, floating),
    CLI_ROW(gen_args, "--output", "-o", CLI_STRING, out),
};

const cli_command cli_generate_command = {
    "generate", usage, generate_opts, CLI_NELEM(generate_opts),
    NULL, 0, 1, 1, "missing model kind (chain)", CLI_WORDS_RANGE,
};

int cmd_generate(int argc, char **argv)
{
    const char *cmd = "generate";
    const char *pos[1];
    gen_args a;
    int npos = 0;
    int rc = cli_parse(&cli_generate_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    if (strcmp(pos[0], "chain") != 0)
        return cli_usage_error(cmd, usage, "unknown model kind '%s' (expected chain)", pos[0]);
    if (!a.n)
        return cli_usage_error(cmd, usage, "missing option --n");
    if (a.joint < 0)
        return cli_usage_error(cmd, usage, "missing option --joint");
    const int n = (int)a.n, jt = a.joint;

    mbs_error err;
    memset(&err, 0, sizeof err);
    char *text = mbs_generate_chain_json(n, (mbs_joint_type)jt, a.floating, &err);
    if (!text) {
        cli_error(cmd, "%s", err.msg);
        return err.code == MBS_ERR_ARG ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
    /* Never write a model the loader rejects. */
    mbs_model *m = mbs_model_load_string(text, "generated chain", &err);
    if (!m) {
        cli_error(cmd, "internal error: the generated model does not load: %s", err.msg);
        free(text);
        return CLI_EXIT_FAIL;
    }
    mbs_model_free(m);

    if (!a.out || strcmp(a.out, "-") == 0) {
        cli_buf b = {text, strlen(text), strlen(text) + 1, 0};
        rc = cli_buf_emit(&b, stdout, cmd);
    } else {
        rc = cli_write_atomic(cmd, NULL, a.out, NULL, text, strlen(text)) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    free(text);
    return rc;
}
