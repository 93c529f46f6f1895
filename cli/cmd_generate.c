/*
 * cmd_generate.c - `mbsens generate chain --n N --joint TYPE [--floating]
 * [--velocities CONV] [-o FILE]` and `mbsens generate free-bodies --bodies N
 * [--robot MODEL [--floating-base]] [--velocities CONV] [-o FILE]`: write a
 * generated benchmark model.
 *
 * The file is written to a temporary file in the same directory and renamed
 * over FILE, so a failure never leaves a half-written FILE behind.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli_options.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens generate chain --n N --joint revolute|cardan|spherical\n"
          "                       [--floating] [--velocities tangent|euler-rates] [-o FILE]\n"
          "       mbsens generate free-bodies --bodies N [--robot MODEL [--floating-base]]\n"
          "                       [--velocities tangent|euler-rates] [-o FILE]\n"
          "\n"
          "Write a generated model (docs/model-format.md). 'chain' is a spatial\n"
          "serial chain of N links (2 <= N <= 256): boxes of 0.3 m with distinct\n"
          "masses of about 1 kg and full inertia tensors, joint axes alternating\n"
          "between two directions, named points 'base' and 'tip' on every link,\n"
          "a non-zero initial state, gravity [0, 0, -9.81], and the parameters\n"
          "'m1' (mass of link1) and 'L1' (length of link1). 'free-bodies' is a\n"
          "robot (any model file; none by default) plus N free rigid bodies\n"
          "'free1'..'freeN' (boxes on floating joints from the ground, on a grid\n"
          "beside the robot, with small velocities). See mbsens/generate.h.\n"
          "\n"
          "Options:\n"
          "  --n N              chain: number of links, 2..256\n"
          "  --joint TYPE       chain: revolute, cardan or spherical\n"
          "  --floating         chain: attach link1 to the ground by a floating joint\n"
          "                     (7 coordinates) instead of a joint of TYPE\n"
          "  --bodies N         free-bodies: number of free bodies, 1..100000\n"
          "  --robot MODEL      free-bodies: the robot (JSON or URDF)\n"
          "  --floating-base    free-bodies, URDF robot: its root link moves on a\n"
          "                     floating joint\n"
          "  --velocities CONV  the spherical and floating joints with tangent\n"
          "                     velocities (angular velocity) or euler-rates (the\n"
          "                     default: the rates of their coordinates)\n"
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
    long n, bodies;
    int joint;
    const char *out, *robot;
    int floating, floating_base, velocities;
} gen_args;

static const cli_opt generate_opts[] = {
    CLI_ROW_RANGE(gen_args, "--n", n, MBS_GENERATE_CHAIN_MIN_LINKS, MBS_GENERATE_CHAIN_MAX_LINKS, NULL),
    CLI_ROW_NAME(gen_args, "--joint", joint, chain_joint_from_name, "revolute, cardan or spherical"),
    CLI_ROW(gen_args, "--floating", NULL, CLI_FLAG, floating),
    CLI_ROW_RANGE(gen_args, "--bodies", bodies, 1, MBS_GENERATE_FREE_BODIES_MAX, NULL),
    CLI_ROW(gen_args, "--robot", NULL, CLI_STRING, robot),
    CLI_ROW(gen_args, "--floating-base", NULL, CLI_FLAG, floating_base),
    CLI_ROW_NAME(gen_args, "--velocities", velocities, cli_velocities_from_name, "tangent or euler-rates"),
    CLI_ROW(gen_args, "--output", "-o", CLI_STRING, out),
};

const cli_command cli_generate_command = {
    "generate", usage, generate_opts, CLI_NELEM(generate_opts),
    NULL, 0, 1, 1, "missing model kind (chain or free-bodies)", CLI_WORDS_RANGE,
};

static void print_warning(void *user, const char *msg)
{
    fprintf(stderr, "mbsens %s: warning: %s\n", (const char *)user, msg);
}

static int is_urdf(const char *path)
{
    const size_t n = strlen(path);
    return n > 5 && strcasecmp(path + n - 5, ".urdf") == 0;
}

/* the text of `generate free-bodies`, or NULL after a message */
static char *free_bodies_text(const char *cmd, const gen_args *a, mbs_error *err)
{
    mbs_model *robot = NULL;
    if (a->robot) {
        if (a->floating_base) {
            mbs_urdf_options o = { 1, 0, print_warning, (void *)cmd, 0, MBS_VELOCITIES_EULER_RATES };
            if (!(robot = mbs_model_load_urdf(a->robot, &o, err))) cli_error(cmd, "%s", err->msg);
        } else {
            robot = cli_load_model(cmd, a->robot);
        }
        if (!robot) return NULL;
    }
    char *text = mbs_generate_free_bodies_json(robot, (int)a->bodies, err);
    if (!text) cli_error(cmd, "%s", err->msg);
    mbs_model_free(robot);
    return text;
}

/* the text of `generate chain`, or NULL after a message */
static char *chain_text(const char *cmd, const gen_args *a, mbs_error *err)
{
    char *text = mbs_generate_chain_json((int)a->n, (mbs_joint_type)a->joint, a->floating, err);
    if (!text) cli_error(cmd, "%s", err->msg);
    return text;
}

/* The generated model m with tangent velocities, as JSON (text, the
 * Euler-rate one, freed), or NULL after a message. */
static char *tangent_text(const char *cmd, const mbs_model *m, char *text)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    free(text);
    mbs_model *mt = mbs_model_with_velocities(m, MBS_VELOCITIES_TANGENT, &err);
    char *out = mt ? mbs_model_to_json(mt, &err) : NULL;
    if (!out) cli_error(cmd, "--velocities tangent: %s", err.msg);
    mbs_model_free(mt);
    return out;
}

/* the options of the other kind: a usage error */
static int kind_options(const char *cmd, const char *kind, const gen_args *a)
{
    const int chain = strcmp(kind, "chain") == 0;
    const char *wrong = chain ? (a->bodies ? "--bodies" : a->robot ? "--robot"
                                 : a->floating_base ? "--floating-base" : NULL)
                              : (a->n ? "--n" : a->joint >= 0 ? "--joint" : a->floating ? "--floating" : NULL);
    if (wrong) return cli_usage_error(cmd, usage, "%s does not apply to '%s'", wrong, kind);
    if (chain && !a->n) return cli_usage_error(cmd, usage, "missing option --n");
    if (chain && a->joint < 0) return cli_usage_error(cmd, usage, "missing option --joint");
    if (!chain && !a->bodies) return cli_usage_error(cmd, usage, "missing option --bodies");
    if (!chain && a->floating_base && !(a->robot && is_urdf(a->robot)))
        return cli_usage_error(cmd, usage, "--floating-base applies to a URDF robot (--robot FILE.urdf)");
    return CLI_EXIT_OK;
}

int cmd_generate(int argc, char **argv)
{
    const char *cmd = "generate";
    const char *pos[1];
    gen_args a;
    int npos = 0;
    int rc = cli_parse(&cli_generate_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    const int chain = strcmp(pos[0], "chain") == 0;
    if (!chain && strcmp(pos[0], "free-bodies") != 0)
        return cli_usage_error(cmd, usage, "unknown model kind '%s' (expected chain or free-bodies)", pos[0]);
    if ((rc = kind_options(cmd, pos[0], &a)) != CLI_EXIT_OK) return rc;

    mbs_error err;
    memset(&err, 0, sizeof err);
    char *text = chain ? chain_text(cmd, &a, &err) : free_bodies_text(cmd, &a, &err);
    if (!text) return err.code == MBS_ERR_ARG && chain ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    /* Never write a model the loader rejects. */
    mbs_model *m = mbs_model_load_string(text, chain ? "generated chain" : "generated free bodies", &err);
    if (!m) {
        cli_error(cmd, "internal error: the generated model does not load: %s", err.msg);
        free(text);
        return CLI_EXIT_FAIL;
    }
    if (a.velocities == MBS_VELOCITIES_TANGENT) text = tangent_text(cmd, m, text);
    mbs_model_free(m);
    if (!text) return CLI_EXIT_FAIL;

    if (!a.out || strcmp(a.out, "-") == 0) {
        cli_buf b = {text, strlen(text), strlen(text) + 1, 0};
        rc = cli_buf_emit(&b, stdout, cmd);
    } else {
        rc = cli_write_atomic(cmd, NULL, a.out, NULL, text, strlen(text)) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    free(text);
    return rc;
}
