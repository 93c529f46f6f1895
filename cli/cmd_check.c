/*
 * cmd_check.c - `mbsens check MODEL [--samples N] [--seed S] [--ref R]
 * [--q LIST --qd LIST] [--tol T] [--json]`: compare every analytical
 * derivative block with complex-step derivatives (mbs_check_derivatives).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
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
          "other. Prints the worst relative error per block and its tolerance; exits\n"
          "1 if any is above it. The tolerance is derived at each state from the\n"
          "round-off of the recursions and the condition number of the mass matrix.\n"
          "\n"
          "Options:\n"
          "  --samples N    number of random states (default 10)\n"
          "  --seed S       random seed (default 1)\n"
          "  --q LIST       check at this state instead (with --qd, default zero)\n"
          "  --ref POINT    reference point: com (default), origin or joint\n"
          "  --tol T        one tolerance for every block instead of the derived ones\n"
          "  --json         print a JSON object\n"
          "  -h, --help     show this help and exit\n", out);
}

/* ,\n  "name": {block: value, ...} */
static void json_blocks(cli_buf *b, const char *name, const double *v)
{
    cli_buf_printf(b, ",\n  \"%s\": {", name);
    for (int k = 0; k < MBS_CHECK_NBLOCKS; k++) {
        cli_buf_printf(b, "%s\n    ", k ? "," : "");
        cli_json_str(b, mbs_check_block_name(k));
        cli_buf_puts(b, ": ");
        cli_json_num(b, v[k]);
    }
    cli_buf_puts(b, "\n  }");
}

typedef struct {
    long samples;
    cli_ulong seed;
    double tol;
    int ref;
    const char *q, *qd;
    int json;
} check_args;

static const cli_opt check_opts[] = {
    CLI_ROW_RANGE(check_args, "--samples", samples, 1, 100000, "an integer in 1..100000"),
    CLI_ROW_UNSIGNED(check_args, "--seed", seed, NULL),
    CLI_ROW(check_args, "--tol", NULL, CLI_POSITIVE, tol),
    CLI_ROW_NAME(check_args, "--ref", ref, mbs_ref_point_from_name, "com, origin or joint"),
    CLI_ROW(check_args, "--q", NULL, CLI_STRING, q),
    CLI_ROW(check_args, "--qd", NULL, CLI_STRING, qd),
    CLI_ROW(check_args, "--json", NULL, CLI_FLAG, json),
};

const cli_command cli_check_command = {
    "check", usage, check_opts, CLI_NELEM(check_opts), NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_EXPECTED,
};

int cmd_check(int argc, char **argv)
{
    const char *cmd = "check";
    const char *pos[1];
    check_args a;
    int npos = 0;
    int rc = cli_parse(&cli_check_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    const int samples = a.samples ? (int)a.samples : 10;
    const unsigned long seed = a.seed.given ? a.seed.value : 1;
    const int fixed_tol = cli_given(a.tol);
    const int ref = a.ref >= 0 ? a.ref : MBS_REF_COM;
    if (a.qd && !a.q) return cli_usage_error(cmd, usage, "--qd needs --q");

    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q = NULL, *qd = NULL;
    if (a.q) {
        q = calloc((size_t)nq + 1, sizeof *q);
        qd = calloc((size_t)nv + 1, sizeof *qd);
        if (!q || !qd) { cli_error(cmd, "out of memory"); rc = CLI_EXIT_FAIL; goto done; }
        if ((rc = cli_parse_values(cmd, "--q", a.q, m, CLI_VALUES_COORDS, q, nq, usage)) != CLI_EXIT_OK) goto done;
        if (a.qd && (rc = cli_parse_values(cmd, "--qd", a.qd, m, CLI_VALUES_VELS, qd, nv, usage)) != CLI_EXIT_OK) goto done;
    }
    mbs_check_report rep;
    mbs_error err;
    if (mbs_check_derivatives(m, samples, seed, (mbs_ref_point)ref, q, qd, &rep, &err) != MBS_OK) {
        cli_error(cmd, "%s", err.msg);
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    /* a given --tol for every block, else each block's derived tolerance (per sample: rep.ratio) */
    int pass = 1, ok[MBS_CHECK_NBLOCKS];
    double tol[MBS_CHECK_NBLOCKS];
    for (int k = 0; k < MBS_CHECK_NBLOCKS; k++) {
        tol[k] = fixed_tol ? a.tol : rep.tol[k];
        ok[k] = fixed_tol ? rep.worst[k] <= a.tol : rep.ratio[k] <= 1;
        pass &= ok[k];
    }
    cli_buf b = {0};
    if (a.json) {
        cli_buf_puts(&b, "{\n  \"model\": ");
        cli_json_str(&b, mbs_model_name(m));
        cli_buf_printf(&b, ",\n  \"ref\": \"%s\",\n  \"samples\": %d,\n  \"condition_number\": ",
                       mbs_ref_point_name((mbs_ref_point)ref), rep.samples);
        cli_json_num(&b, rep.cond);
        json_blocks(&b, "tolerance", tol);
        json_blocks(&b, "worst_relative_error", rep.worst);
        cli_buf_printf(&b, ",\n  \"passed\": %s\n}\n", pass ? "true" : "false");
    } else {
        cli_buf_printf(&b, "model %s: %d coordinates, %d parameters; ref %s; %d sample%s\n",
                       mbs_model_name(m), nq, mbs_model_nparams(m), mbs_ref_point_name((mbs_ref_point)ref),
                       rep.samples, rep.samples == 1 ? "" : "s");
        cli_buf_printf(&b, "condition number of M (completed for Euler parameters): %.2e\n", rep.cond);
        cli_buf_printf(&b, "%-12s %14s %10s  %s\n", "block", "worst rel.err", "tolerance", "vs complex step");
        for (int k = 0; k < MBS_CHECK_NBLOCKS; k++)
            cli_buf_printf(&b, "%-12s %14.3e %10.1e  %s\n", mbs_check_block_name(k), rep.worst[k], tol[k],
                           ok[k] ? "ok" : "ABOVE TOLERANCE");
        cli_buf_printf(&b, "%s (tolerance %s)\n", pass ? "all derivatives agree" : "FAILED",
                       fixed_tol ? "given" : "from round-off and conditioning");
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
