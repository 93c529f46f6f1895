/*
 * cmd_inverse.c - `mbsens inverse MODEL [--q ...] [--qd ...] [--qdd ...]
 * [--ref com|origin|joint] [--json]`: generalized forces by recursive
 * Newton-Euler.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_session.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens inverse MODEL [--q LIST] [--qd LIST] [--qdd LIST]\n"
          "                      [--ref com|origin|joint] [--json]\n"
          "\n"
          "Inverse dynamics: the generalized forces tau = M(q) qdd - Q(q, qd) that\n"
          "produce the accelerations qdd at the state (q, qd), one per coordinate\n"
          "(for Euler parameters tau is orthogonal to p).\n"
          "\n"
          "LIST is a comma-separated list of numbers, one per coordinate, in the\n"
          "order of 'mbsens info MODEL' (e.g. --qdd 1,0,-2). Euler parameters must\n"
          "be normalized.\n"
          "\n"
          "Options:\n"
          "  --q LIST       joint coordinates (default: the model's q0)\n"
          "  --qd LIST      joint velocities (default: the model's qd0)\n"
          "  --qdd LIST     joint accelerations (default: zero)\n"
          "  --ref POINT    reference point of the recursive velocity variables:\n"
          "                 com (default), origin or joint; results do not depend on it\n"
          "  --json         print a JSON object instead of text\n"
          "  -h, --help     show this help and exit\n", out);
}

static void text_output(cli_buf *b, const cli_state *st, const double *tau)
{
    const mbs_model *m = st->m;
    int w = 10;
    for (int k = 0; k < st->nv; k++) {
        int l = (int)strlen(mbs_vel_name(m, k));
        if (l > w)
            w = l;
    }
    cli_buf_printf(b, "model %s  (ref: %s)\n", mbs_model_name(m), mbs_ref_point_name(st->ref));
    cli_buf_printf(b, "%-*s  %16s\n", w, "coordinate", "tau");
    for (int k = 0; k < st->nv; k++)
        cli_buf_printf(b, "%-*s  % .9e\n", w, mbs_vel_name(m, k), tau[k]);
}

static void json_output(cli_buf *b, const cli_state *st, const double *tau)
{
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(st->m));
    cli_buf_puts(b, ",\n  \"ref\": ");
    cli_json_str(b, mbs_ref_point_name(st->ref));
    cli_buf_puts(b, ",\n  \"coordinates\": ");
    cli_json_coord_names(b, st->m);
    if (st->nv != st->nq) {   /* a joint with tangent velocities: qd, qdd, tau are per velocity */
        cli_buf_puts(b, ",\n  \"velocities\": ");
        cli_json_vel_names(b, st->m);
    }
    cli_buf_puts(b, ",\n  \"q\": ");
    cli_json_vec(b, st->q, st->nq);
    cli_buf_puts(b, ",\n  \"qd\": ");
    cli_json_vec(b, st->qd, st->nv);
    cli_buf_puts(b, ",\n  \"qdd\": ");
    cli_json_vec(b, st->qdd, st->nv);
    cli_buf_puts(b, ",\n  \"tau\": ");
    cli_json_vec(b, tau, st->nv);
    cli_buf_puts(b, "\n}\n");
}

typedef struct {
    const char *q, *qd, *qdd, *ref;
    int json;
} inv_args;

static const cli_opt inverse_opts[] = {
    CLI_ROW(inv_args, "--q", NULL, CLI_STRING, q),
    CLI_ROW(inv_args, "--qd", NULL, CLI_STRING, qd),
    CLI_ROW(inv_args, "--qdd", NULL, CLI_STRING, qdd),
    CLI_ROW(inv_args, "--ref", NULL, CLI_STRING, ref),
    CLI_ROW(inv_args, "--json", NULL, CLI_FLAG, json),
};

const cli_command cli_inverse_command = {
    "inverse", usage, inverse_opts, CLI_NELEM(inverse_opts), NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_inverse(int argc, char **argv)
{
    const char *cmd = "inverse";
    const char *pos[1];
    inv_args a = {0};
    int npos = 0;
    int rc = cli_parse(&cli_inverse_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;

    cli_state st;
    rc = cli_state_init(&st, cmd, pos[0], a.q, a.qd, a.qdd, a.ref, usage);
    if (rc == CLI_EXIT_OK) {
        double *tau = calloc(st.nv > 0 ? (size_t)st.nv : 1, sizeof *tau);
        if (!tau) {
            cli_error(cmd, "out of memory");
            rc = CLI_EXIT_FAIL;
        } else if (mbs_inverse_dynamics(st.m, st.d, st.q, st.qd, st.qdd, tau) != MBS_OK) {
            const char *msg = mbs_data_error(st.d);
            cli_error(cmd, "%s", msg && msg[0] ? msg : "inverse dynamics failed");
            rc = CLI_EXIT_FAIL;
        } else {
            cli_buf b = {0};
            if (a.json)
                json_output(&b, &st, tau);
            else
                text_output(&b, &st, tau);
            rc = cli_buf_emit(&b, stdout, cmd);
            cli_buf_free(&b);
        }
        free(tau);
    }
    cli_state_free(&st);
    return rc;
}
