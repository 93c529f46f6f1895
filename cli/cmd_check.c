/*
 * cmd_check.c - `mbsens check MODEL [--samples N] [--seed S] [--ref R]
 * [--q LIST --qd LIST] [--tol T] [--json]`: compare every analytical
 * derivative block with complex-step derivatives (mbs_check_derivatives).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens check MODEL [--samples N] [--seed S] [--ref com|origin|joint]\n"
          "                    [--q LIST [--qd LIST]] [--tol T] [--json]\n"
          "\n"
          "Verify the analytical derivatives of inverse and forward dynamics on MODEL:\n"
          "dtau/dq, dtau/dqd, dtau/drho, dqdd/dq, dqdd/dqd, dqdd/dtau, dqdd/drho are\n"
          "compared with complex-step derivatives (exact to round-off) at random\n"
          "states, and the fully recursive and semi-recursive algorithms with each\n"
          "other. Prints the worst relative error per block; exits 1 if any is\n"
          "above the tolerance.\n"
          "\n"
          "Options:\n"
          "  --samples N    number of random states (default 10)\n"
          "  --seed S       random seed (default 1)\n"
          "  --q LIST       check at this state instead (with --qd, default zero)\n"
          "  --ref POINT    reference point: com (default), origin or joint\n"
          "  --tol T        tolerance on the relative error (default 1e-10)\n"
          "  --json         print a JSON object\n"
          "  -h, --help     show this help and exit\n", out);
}

int cmd_check(int argc, char **argv)
{
    const char *cmd = "check";
    const char *samples_s = NULL, *seed_s = NULL, *ref_s = NULL, *tol_s = NULL, *q_s = NULL, *qd_s = NULL;
    const char *pos[1];
    int json = 0, npos = 0;
    const cli_option opts[] = {
        {"--samples", NULL, &samples_s, NULL}, {"--seed", NULL, &seed_s, NULL},
        {"--ref", NULL, &ref_s, NULL},         {"--tol", NULL, &tol_s, NULL},
        {"--q", NULL, &q_s, NULL},             {"--qd", NULL, &qd_s, NULL},
        {"--json", NULL, NULL, &json},
    };
    int rc = cli_parse_argv(cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos, usage);
    if (rc == CLI_PARSE_HELP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
    if (npos != 1) return cli_usage_error(cmd, usage, "missing MODEL argument");
    int samples = 10;
    unsigned long seed = 1;
    double tol = 1e-10;
    char *end;
    if (samples_s) {
        long v = strtol(samples_s, &end, 10);
        if (*end || v < 1 || v > 100000)
            return cli_usage_error(cmd, usage, "--samples: expected an integer in 1..100000, got '%s'", samples_s);
        samples = (int)v;
    }
    if (seed_s) {
        errno = 0;
        unsigned long v = strtoul(seed_s, &end, 10);   /* (strtoul would wrap a '-' round) */
        if (*end || !seed_s[0] || errno == ERANGE || strchr(seed_s, '-')) return cli_usage_error(cmd, usage, "--seed: expected a non-negative integer, got '%s'", seed_s);
        seed = v;
    }
    if (tol_s) {
        double v = strtod(tol_s, &end);
        if (*end || !(v > 0)) return cli_usage_error(cmd, usage, "--tol: expected a positive number, got '%s'", tol_s);
        tol = v;
    }
    int ref = MBS_REF_COM;
    if (ref_s && (ref = mbs_ref_point_from_name(ref_s)) < 0)
        return cli_usage_error(cmd, usage, "--ref: expected com, origin or joint, got '%s'", ref_s);
    if (qd_s && !q_s) return cli_usage_error(cmd, usage, "--qd needs --q");

    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    int nq = mbs_model_nq(m);
    double *q = NULL, *qd = NULL;
    if (q_s) {
        q = calloc((size_t)nq + 1, sizeof *q);
        qd = calloc((size_t)nq + 1, sizeof *qd);
        if (!q || !qd) { cli_error(cmd, "out of memory"); rc = CLI_EXIT_FAIL; goto done; }
        if ((rc = cli_parse_values(cmd, "--q", q_s, m, q, nq, usage)) != CLI_EXIT_OK) goto done;
        if (qd_s && (rc = cli_parse_values(cmd, "--qd", qd_s, m, qd, nq, usage)) != CLI_EXIT_OK) goto done;
    }
    mbs_check_report rep;
    mbs_error err;
    if (mbs_check_derivatives(m, samples, seed, (mbs_ref_point)ref, q, qd, &rep, &err) != MBS_OK) {
        cli_error(cmd, "%s", err.msg);
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    int pass = 1;
    for (int k = 0; k < MBS_CHECK_NBLOCKS; k++)
        if (!(rep.worst[k] <= tol)) pass = 0;
    cli_buf b = {0};
    if (json) {
        cli_buf_puts(&b, "{\n  \"model\": ");
        cli_json_str(&b, mbs_model_name(m));
        cli_buf_printf(&b, ",\n  \"ref\": \"%s\",\n  \"samples\": %d,\n  \"tolerance\": ",
                       mbs_ref_point_name((mbs_ref_point)ref), rep.samples);
        cli_json_num(&b, tol);
        cli_buf_puts(&b, ",\n  \"worst_relative_error\": {");
        for (int k = 0; k < MBS_CHECK_NBLOCKS; k++) {
            cli_buf_printf(&b, "%s\n    ", k ? "," : "");
            cli_json_str(&b, mbs_check_block_name(k));
            cli_buf_puts(&b, ": ");
            cli_json_num(&b, rep.worst[k]);
        }
        cli_buf_printf(&b, "\n  },\n  \"passed\": %s\n}\n", pass ? "true" : "false");
    } else {
        cli_buf_printf(&b, "model %s: %d coordinates, %d parameters; ref %s; %d sample%s\n",
                       mbs_model_name(m), nq, mbs_model_nparams(m), mbs_ref_point_name((mbs_ref_point)ref),
                       rep.samples, rep.samples == 1 ? "" : "s");
        cli_buf_printf(&b, "%-12s %14s  %s\n", "block", "worst rel.err", "vs complex step");
        for (int k = 0; k < MBS_CHECK_NBLOCKS; k++)
            cli_buf_printf(&b, "%-12s %14.3e  %s\n", mbs_check_block_name(k), rep.worst[k],
                           rep.worst[k] <= tol ? "ok" : "ABOVE TOLERANCE");
        cli_buf_printf(&b, "%s (tolerance %.1e)\n", pass ? "all derivatives agree" : "FAILED", tol);
    }
    rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    if (rc == CLI_EXIT_OK && !pass) rc = CLI_EXIT_FAIL;
done:
    free(q);
    free(qd);
    mbs_model_free(m);
    return rc;
}
