/*
 * cmd_assemble.c - `mbsens assemble MODEL [--t T] [--json] [--model-out
 * FILE]`: the initial state a run starts from. The Euler parameters are
 * normalized; a model with cut joints or drivers is assembled (mbs_assemble)
 * and its velocities solved (mbs_solve_velocity) at t, holding the
 * coordinates of the model's "assembly.fixed": the same calls as a run
 * makes before its first step (cli_initial.c). --model-out writes the
 * model file back with these q0 and qd0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_options.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens assemble MODEL [--t T] [--json] [--model-out FILE]\n"
          "\n"
          "The initial state a simulation of MODEL starts from: its q0 with the Euler\n"
          "parameters normalized and, for closed loops and drivers, assembled\n"
          "(Newton-Raphson on the constraints) with the velocities qd0 solved, at time T,\n"
          "holding the coordinates listed in the model's \"assembly\": {\"fixed\": [...]}.\n"
          "Prints every coordinate's given and assembled position and velocity.\n"
          "\n"
          "Options:\n"
          "  --t T             time of the assembly (default: the model's simulation t0)\n"
          "  --json            print a JSON object instead of text\n"
          "  --model-out FILE  write the model (a JSON model file) with these q0, qd0\n"
          "                    (atomically; not the input file)\n"
          "  -h, --help        show this help and exit\n", out);
}

typedef struct {
    const mbs_model *m;
    int nq, closed;
    double t;
    double *q0, *qd0, *q, *qd;
    mbs_assembly_report rep;
    const int *fixed;
    int nfixed;
} assembly;

static int solve(const char *cmd, assembly *a)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_data *d = mbs_data_create(a->m, &err);
    if (!d) {
        cli_error(cmd, "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    mbs_model_initial_state(a->m, a->q0, a->qd0);
    memcpy(a->q, a->q0, sizeof(double) * (size_t)a->nq);
    memcpy(a->qd, a->qd0, sizeof(double) * (size_t)a->nq);
    int rc = mbs_normalize_state(a->m, a->q, a->qd);
    if (rc == MBS_OK && a->closed) {
        mbs_data_set_time(d, a->t);
        rc = mbs_assemble(a->m, d, a->q, a->t, NULL, &a->rep);
        if (rc == MBS_OK) rc = mbs_solve_velocity(a->m, d, a->q, a->qd, a->t, NULL);
    }
    if (rc != MBS_OK) cli_error(cmd, "%s", mbs_data_error(d));
    mbs_data_free(d);
    return rc == MBS_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int is_fixed(const assembly *a, int k)
{
    for (int i = 0; i < a->nfixed; i++)
        if (a->fixed[i] == k) return 1;
    return 0;
}

static void text_output(cli_buf *b, const assembly *a)
{
    const mbs_model *m = a->m;
    int w = 10;
    for (int k = 0; k < a->nq; k++) {
        int l = (int)strlen(mbs_coord_name(m, k));
        if (l > w) w = l;
    }
    if (a->closed)
        cli_buf_printf(b, "model %s: assembled at t = %g in %d iterations (max |Phi| %.3e)\n", mbs_model_name(m),
                       a->t, a->rep.iterations, a->rep.residual);
    else
        cli_buf_printf(b, "model %s: no loops or drivers (Euler parameters normalized only)\n",
                       mbs_model_name(m));
    cli_buf_printf(b, "%-*s  %16s %16s %10s  %16s %16s %10s\n", w, "coordinate", "q0", "q", "change", "qd0", "qd",
                   "change");
    for (int k = 0; k < a->nq; k++)
        cli_buf_printf(b, "%-*s  % 16.9e % 16.9e % 10.3e  % 16.9e % 16.9e % 10.3e%s\n", w, mbs_coord_name(m, k),
                       a->q0[k], a->q[k], a->q[k] - a->q0[k], a->qd0[k], a->qd[k], a->qd[k] - a->qd0[k],
                       is_fixed(a, k) ? "  (fixed)" : "");
}

static void json_output(cli_buf *b, const assembly *a)
{
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(a->m));
    cli_buf_printf(b, ",\n  \"assembled\": %s,\n  \"t\": ", a->closed ? "true" : "false");
    cli_json_num(b, a->t);
    cli_buf_printf(b, ",\n  \"iterations\": %d,\n  \"residual\": ", a->rep.iterations);
    cli_json_num(b, a->rep.residual);
    cli_buf_puts(b, ",\n  \"coordinates\": ");
    cli_json_coord_names(b, a->m);
    cli_buf_puts(b, ",\n  \"fixed\": [");
    for (int i = 0; i < a->nfixed; i++) {
        if (i) cli_buf_puts(b, ", ");
        cli_json_str(b, mbs_coord_name(a->m, a->fixed[i]));
    }
    const char *names[4] = { "q0", "q", "qd0", "qd" };
    const double *v[4] = { a->q0, a->q, a->qd0, a->qd };
    cli_buf_puts(b, "]");
    for (int k = 0; k < 4; k++) {
        cli_buf_printf(b, ",\n  \"%s\": ", names[k]);
        cli_json_vec(b, v[k], a->nq);
    }
    cli_buf_puts(b, "\n}\n");
}

/* The input file with joints[*].q0 and .qd0 replaced by q and qd. */
static int model_out(const char *cmd, const char *in, const char *out, const assembly *a)
{
    json_error_t je;
    json_t *root = json_load_file(in, 0, &je);
    json_t *joints = root ? json_object_get(root, "joints") : NULL;
    if (!json_is_array(joints)) {
        cli_error(cmd, "--model-out: '%s' is not a JSON model file (%s); convert it first (mbsens convert)", in,
                  root ? "no joints array" : je.text);
        json_decref(root);
        return CLI_EXIT_FAIL;
    }
    const int nb = mbs_model_nbodies(a->m);   /* tree joint j moves body j */
    size_t i;
    json_t *jj;
    json_array_foreach(joints, i, jj)
    {
        const char *name = json_string_value(json_object_get(jj, "name"));
        for (int j = 1; name && j <= nb; j++) {
            const int n = mbs_joint_nq(a->m, j), off = mbs_joint_coord_offset(a->m, j);
            if (n == 0 || strcmp(name, mbs_joint_name(a->m, j)) != 0) continue;
            json_t *q = json_array(), *qd = json_array();
            for (int k = 0; k < n; k++) {
                json_array_append_new(q, json_real(a->q[off + k]));
                json_array_append_new(qd, json_real(a->qd[off + k]));
            }
            json_object_set_new(jj, "q0", q);
            json_object_set_new(jj, "qd0", qd);
        }
    }
    cli_buf text = { 0 };
    cli_json_write(&text, root);
    json_decref(root);
    int rc = CLI_EXIT_FAIL;
    if (text.oom)
        cli_error(cmd, "--model-out: out of memory");
    else
        rc = cli_write_atomic(cmd, "--model-out", out, in, text.s, text.len) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    cli_buf_free(&text);
    return rc;
}

typedef struct {
    const char *t, *model_out;
    int json;
} asm_args;

static const cli_opt assemble_opts[] = {
    CLI_ROW(asm_args, "--t", NULL, CLI_STRING, t),
    CLI_ROW(asm_args, "--model-out", NULL, CLI_STRING, model_out),
    CLI_ROW(asm_args, "--json", NULL, CLI_FLAG, json),
};

const cli_command cli_assemble_command = {
    "assemble", usage, assemble_opts, CLI_NELEM(assemble_opts),
    NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_assemble(int argc, char **argv)
{
    const char *cmd = "assemble";
    const char *pos[1];
    asm_args opt = {0};
    int npos = 0;
    int rc = cli_parse(&cli_assemble_command, argc, argv, &opt, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    double t = 0;
    if (opt.t) {
        char *end;
        t = strtod(opt.t, &end);
        if (end == opt.t || *end || !isfinite(t)) return cli_usage_error(cmd, usage, "--t: invalid number '%s'", opt.t);
    }
    if (opt.model_out && cli_output_check(cmd, opt.model_out, pos[0]) != 0) return CLI_EXIT_FAIL;
    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    assembly a = { .m = m, .nq = mbs_model_nq(m) };
    a.closed = mbs_model_ncuts(m) + mbs_model_ndrivers(m) > 0;
    a.t = opt.t ? t : mbs_model_sim_options(m).t0;
    a.nfixed = mbs_model_assembly_fixed(m, &a.fixed);
    size_t n = (size_t)(a.nq > 0 ? a.nq : 1);
    double *buf = calloc(4 * n, sizeof *buf);
    cli_buf b = { 0 };
    if (!buf) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    a.q0 = buf;
    a.qd0 = buf + n;
    a.q = buf + 2 * n;
    a.qd = buf + 3 * n;
    if ((rc = solve(cmd, &a)) != CLI_EXIT_OK) goto done;
    if (opt.model_out && (rc = model_out(cmd, pos[0], opt.model_out, &a)) != CLI_EXIT_OK) goto done;
    if (opt.json)
        json_output(&b, &a);
    else
        text_output(&b, &a);
    rc = cli_buf_emit(&b, stdout, cmd);
done:
    cli_buf_free(&b);
    free(buf);
    mbs_model_free(m);
    return rc;
}
