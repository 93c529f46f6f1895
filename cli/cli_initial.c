/*
 * cli_initial.c - what a run does to the model's initial state before its
 * first step (see cli_util.h, "initial state"): the same calls as
 * mbs_integrator_reset (normalization of the Euler parameters, then, for a
 * closed-loop formulation, the assembly of q and the velocity problem at
 * t0), made here on a copy so that the commands can say what changed.
 */
#include "cli_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest |a_k - b_k| and its index (-1 when all are equal). */
static double max_change(const double *a, const double *b, int n, int *at)
{
    double dmax = 0;
    *at = -1;
    for (int k = 0; k < n; k++) {
        double dk = fabs(a[k] - b[k]);
        if (dk > dmax) {
            dmax = dk;
            *at = k;
        }
    }
    return dmax;
}

int cli_initial_change_eval(const char *cmd, const mbs_model *m, double t0, mbs_loop_formulation loop,
                            cli_initial_change *ch)
{
    memset(ch, 0, sizeof *ch);
    ch->iq = ch->iqd = -1;
    ch->closed = loop != MBS_LOOP_NONE && mbs_model_ncuts(m) + mbs_model_ndrivers(m) > 0;
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double tol;
    mbs_model_assembly_settings(m, &tol, NULL);
    ch->tol = tol;
    size_t n = (size_t)(nq > 0 ? nq : 1), nvs = (size_t)(nv > 0 ? nv : 1);
    double *q0 = calloc(2 * n + 2 * nvs, sizeof *q0);
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_data *d = q0 ? mbs_data_create(m, &err) : NULL;
    if (!d) {
        cli_error(cmd, "%s", q0 ? err.msg : "out of memory");
        free(q0);
        return CLI_EXIT_FAIL;
    }
    double *q = q0 + n, *qd0 = q + n, *qd = qd0 + nvs;
    mbs_model_initial_state(m, q0, qd0);
    memcpy(q, q0, sizeof *q * n);
    memcpy(qd, qd0, sizeof *qd * nvs);
    int rc = mbs_normalize_state(m, q, qd);
    if (rc == MBS_OK) {
        if (ch->closed) {
            mbs_data_set_time(d, t0);
            rc = mbs_assemble(m, d, q, t0, NULL, NULL);
            if (rc == MBS_OK) rc = mbs_solve_velocity(m, d, q, qd, t0, NULL);
        }
    }
    /* a failure is the run's to report, with its own words */
    if (rc == MBS_OK) {
        ch->dq = max_change(q, q0, nq, &ch->iq);
        ch->dqd = max_change(qd, qd0, nv, &ch->iqd);
        int moving = 0, still = 1;
        for (int k = 0; k < nv; k++) {
            moving |= qd0[k] != 0;
            still &= qd[k] == 0;
        }
        ch->qd_zeroed = moving && still;
    }
    mbs_data_free(d);
    free(q0);
    return CLI_EXIT_OK;
}

int cli_initial_change_matters(const cli_initial_change *ch)
{
    return ch->dq > ch->tol || ch->dqd > ch->tol || ch->qd_zeroed;
}

static const char *coord(const mbs_model *m, int k)
{
    return k >= 0 ? mbs_coord_name(m, k) : "-";
}

static const char *vel(const mbs_model *m, int k)
{
    return k >= 0 ? mbs_vel_name(m, k) : "-";
}

void cli_initial_change_note(FILE *out, const char *cmd, const mbs_model *m, const cli_initial_change *ch)
{
    if (!cli_initial_change_matters(ch)) return;
    const char *what = ch->closed ? "assembled at t0 (closed loops)" : "normalized (Euler parameters)";
    if (ch->dq > ch->tol)
        fprintf(out, "mbsens %s: note: the model's q0 was %s: max |q - q0| = %.3g (%s)\n", cmd, what, ch->dq,
                coord(m, ch->iq));
    if (ch->qd_zeroed)
        fprintf(out,
                "mbsens %s: note: the model's qd0 was set to zero by the velocity problem (max change %.3g, %s): "
                "list the coordinates whose speed is given in \"assembly\": {\"fixed\": [...]}\n",
                cmd, ch->dqd, vel(m, ch->iqd));
    else if (ch->dqd > ch->tol)
        fprintf(out, "mbsens %s: note: the model's qd0 was made consistent with the constraints: "
                     "max |qd - qd0| = %.3g (%s)\n", cmd, ch->dqd, vel(m, ch->iqd));
}

void cli_initial_change_summary(FILE *out, const mbs_model *m, const cli_initial_change *ch)
{
    if (!ch->closed && ch->iq < 0 && ch->iqd < 0) return;   /* an open tree, nothing to say */
    fprintf(out, "  initial state    %s: max |q - q0| %.3e (%s), max |qd - qd0| %.3e (%s)%s\n",
            ch->closed ? "assembled" : "normalized", ch->dq, coord(m, ch->iq), ch->dqd, vel(m, ch->iqd),
            ch->qd_zeroed ? ", qd0 set to zero" : "");
}

void cli_initial_change_json(cli_buf *b, const mbs_model *m, const cli_initial_change *ch)
{
    cli_buf_printf(b, "{\"assembled\": %s, \"q_change\": ", ch->closed ? "true" : "false");
    cli_json_num(b, ch->dq);
    cli_buf_puts(b, ", \"q_change_at\": ");
    if (ch->iq >= 0) cli_json_str(b, mbs_coord_name(m, ch->iq));
    else cli_buf_puts(b, "null");
    cli_buf_puts(b, ", \"qd_change\": ");
    cli_json_num(b, ch->dqd);
    cli_buf_puts(b, ", \"qd_change_at\": ");
    if (ch->iqd >= 0) cli_json_str(b, mbs_vel_name(m, ch->iqd));
    else cli_buf_puts(b, "null");
    cli_buf_printf(b, ", \"qd_zeroed\": %s}", ch->qd_zeroed ? "true" : "false");
}
