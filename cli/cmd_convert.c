/*
 * cmd_convert.c - `mbsens convert MODEL [--to json|mjcf] [-o FILE]
 * [--floating-base] [--strict-inertia]`: write a model (URDF or JSON) as
 * our JSON model (docs/model-format.md, mbs_model_to_json; loading the
 * result gives the same dynamics) or as MuJoCo MJCF (mbs_model_to_mjcf;
 * docs/viewer.md says what carries over).
 *
 * The file is written to a temporary file in the same directory and renamed
 * over FILE, so a failure never leaves a half-written FILE behind.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_options.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens convert MODEL [--to json|mjcf] [-o FILE] [--floating-base]\n"
          "                      [--strict-inertia] [--velocities tangent|euler-rates]\n"
          "\n"
          "Write MODEL (a URDF file, *.urdf, or a JSON model) as a JSON model\n"
          "(docs/model-format.md), or with --to mjcf as a MuJoCo MJCF file (gravity,\n"
          "bodies, joints, inertias, springs as tendons and joint stiffness, closed\n"
          "loops as equality constraints, URDF shapes or a stick figure as geoms;\n"
          "docs/viewer.md). URDF links joined by fixed joints become one\n"
          "body; their frames are kept as named points and vectors. Loader\n"
          "warnings (e.g. inertias violating the triangle inequality) go to\n"
          "standard error; the JSON file then says \"lenient_inertia\": true.\n"
          "\n"
          "Options:\n"
          "  --to FORMAT        json (default) or mjcf\n"
          "  -o, --output FILE  output file (default or '-': standard output);\n"
          "                     written atomically (temporary file and rename).\n"
          "                     MJCF of chains deeper than 48 bodies: also\n"
          "                     FILE_segK.xml beside it (included by FILE)\n"
          "  --floating-base    URDF: the root link moves on a floating joint\n"
          "                     'root_joint' (default: it is fixed to the ground)\n"
          "  --strict-inertia   URDF: reject inertias that violate the triangle\n"
          "                     inequality instead of accepting them with a warning\n"
          "  --velocities CONV  every spherical and floating joint with tangent\n"
          "                     velocities (angular velocity; nv = nq - 1 per joint) or\n"
          "                     euler-rates (the rates of its coordinates), the initial\n"
          "                     velocities mapped (default: as in MODEL)\n"
          "  -h, --help         show this help and exit\n", out);
}

static void print_warning(void *user, const char *msg)
{
    fprintf(stderr, "mbsens %s: warning: %s\n", (const char *)user, msg);
}

static int is_urdf(const char *path)
{
    size_t n = strlen(path);
    if (n < 5) return 0;
    const char *e = path + n - 5;
    return e[0] == '.' && (e[1] == 'u' || e[1] == 'U') && (e[2] == 'r' || e[2] == 'R') &&
           (e[3] == 'd' || e[3] == 'D') && (e[4] == 'f' || e[4] == 'F');
}

/* base name of an MJCF output path: no directory, no ".xml" */
static void mjcf_base(const char *out, char *base, size_t len)
{
    const char *slash = out ? strrchr(out, '/') : NULL;
    snprintf(base, len, "%s", !out || !strcmp(out, "-") ? "model" : slash ? slash + 1 : out);
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".xml") == 0) base[n - 4] = '\0';
}

/* The MJCF files: the included ones first, then the model file, each
 * atomically; on a failure the ones already written are removed. */
static int write_mjcf(const char *cmd, const mbs_model *m, const char *out, const char *input)
{
    char base[1024];
    mjcf_base(out, base, sizeof base);
    mbs_mjcf x;
    mbs_error err;
    if (mbs_model_to_mjcf(m, base, &x, &err) != MBS_OK) {
        cli_error(cmd, "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK;
    if (x.nfilled > 0)
        fprintf(stderr, "mbsens %s: note: %d moving bod%s without mass or rotational inertia given a negligible "
                "one (~1e-12 of the model's; MuJoCo 2.2.2 rejects them)\n", cmd, x.nfilled,
                x.nfilled == 1 ? "y" : "ies");
    if (!out || strcmp(out, "-") == 0) {
        if (x.nfiles > 1) {
            cli_error(cmd, "the MJCF of %s is %d files (a chain deeper than 48 bodies): give -o FILE.xml",
                      mbs_model_name(m), x.nfiles);
            rc = CLI_EXIT_FAIL;
        } else if (fputs(x.text[0], stdout) < 0 || fflush(stdout) != 0) {
            cli_error(cmd, "cannot write to standard output: %s", strerror(errno));
            rc = CLI_EXIT_FAIL;
        }
        mbs_mjcf_free(&x);
        return rc;
    }
    const char *slash = strrchr(out, '/');
    int dirlen = slash ? (int)(slash - out + 1) : 0;
    int k;
    for (k = x.nfiles - 1; k >= 0 && rc == CLI_EXIT_OK; k--) {
        char path[8192];
        if (k == 0) snprintf(path, sizeof path, "%s", out);
        else snprintf(path, sizeof path, "%.*s%s", dirlen, out, x.name[k]);
        if (cli_write_atomic(cmd, NULL, path, input, x.text[k], strlen(x.text[k])) != 0) rc = CLI_EXIT_FAIL;
    }
    for (k += 2; rc != CLI_EXIT_OK && k < x.nfiles; k++) {   /* the files written before the failure */
        char path[8192];
        snprintf(path, sizeof path, "%.*s%s", dirlen, out, x.name[k]);
        unlink(path);
    }
    mbs_mjcf_free(&x);
    return rc;
}

typedef struct {
    const char *out, *to;
    int floating, strict, velocities;
} conv_args;

static const cli_opt convert_opts[] = {
    CLI_ROW(conv_args, "--output", "-o", CLI_STRING, out),
    CLI_ROW(conv_args, "--to", NULL, CLI_STRING, to),
    CLI_ROW(conv_args, "--floating-base", NULL, CLI_FLAG, floating),
    CLI_ROW(conv_args, "--strict-inertia", NULL, CLI_FLAG, strict),
    CLI_ROW_NAME(conv_args, "--velocities", velocities, cli_velocities_from_name, "tangent or euler-rates"),
};

const cli_command cli_convert_command = {
    "convert", usage, convert_opts, CLI_NELEM(convert_opts), NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_convert(int argc, char **argv)
{
    const char *cmd = "convert";
    const char *pos[1];
    conv_args a = {0};
    int npos = 0;
    int rc = cli_parse(&cli_convert_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    if (a.to && strcmp(a.to, "json") != 0 && strcmp(a.to, "mjcf") != 0)
        return cli_usage_error(cmd, usage, "--to: unknown format '%s' (expected json or mjcf)", a.to);
    if ((a.floating || a.strict) && !is_urdf(pos[0]))
        return cli_usage_error(cmd, usage, "--floating-base and --strict-inertia apply to URDF files (*.urdf)");

    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m;
    if (is_urdf(pos[0])) {
        mbs_urdf_options o = { a.floating, a.strict, print_warning, (void *)cmd, 0, MBS_VELOCITIES_EULER_RATES };
        m = mbs_model_load_urdf(pos[0], &o, &err);
    } else {
        m = mbs_model_load_warn(pos[0], print_warning, (void *)cmd, &err);
    }
    if (!m) {
        cli_error(cmd, "%s", err.msg[0] ? err.msg : "cannot load the model");
        return CLI_EXIT_FAIL;
    }
    if (a.velocities >= 0) {
        mbs_model *mv = mbs_model_with_velocities(m, (mbs_velocities)a.velocities, &err);
        mbs_model_free(m);
        if (!mv) {
            cli_error(cmd, "--velocities %s: %s", a.velocities ? "tangent" : "euler-rates", err.msg);
            return CLI_EXIT_FAIL;
        }
        m = mv;
    }
    if (a.to && strcmp(a.to, "mjcf") == 0) {
        rc = write_mjcf(cmd, m, a.out, pos[0]);
        mbs_model_free(m);
        return rc;
    }
    cli_buf text = { 0 };
    int bad = cli_model_json(cmd, "", m, &text);
    mbs_model_free(m);
    if (bad) {
        cli_buf_free(&text);
        return CLI_EXIT_FAIL;
    }
    if (!a.out || strcmp(a.out, "-") == 0)
        rc = cli_buf_emit(&text, stdout, cmd);
    else
        rc = cli_write_atomic(cmd, NULL, a.out, pos[0], text.s, text.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    cli_buf_free(&text);
    return rc;
}
