/*
 * own_objective.c - a program's own objective in a sensitivity analysis.
 *
 * Usage: own_objective MODEL.json [METHOD]      (METHOD: ddm, davm, cavm, fd)
 *
 * Adds psi = integral of g dt with g = sum_i qd_i^2 (twice the kinetic
 * energy of unit inertias: a measure of how much the mechanism moves) to
 * the model's objectives, and prints psi and its gradient with respect to
 * the model's design parameters. The callback gives g and, when asked, its
 * partial derivatives g_q, g_qd, g_qdd and g_rho; mbsens does the rest with
 * the chosen method. For example, with the five-bar of the thesis:
 *
 *     own_objective models/fivebar.json ddm
 */
#include <mbsens/mbsens.h>
#include <stdio.h>
#include <stdlib.h>

static int activity(void *user, double t, int nq, const double *q, const double *qd, const double *qdd, int np,
                    const double *rho, double *g, double *g_q, double *g_qd, double *g_qdd, double *g_rho)
{
    (void)user; (void)t; (void)q; (void)qdd; (void)rho;
    double s = 0;
    for (int i = 0; i < nq; i++) s += qd[i] * qd[i];
    *g = s;
    if (g_q) {   /* the derivatives, when the method asks for them */
        for (int i = 0; i < nq; i++) {
            g_q[i] = 0;
            g_qd[i] = 2 * qd[i];
            g_qdd[i] = 0;
        }
        for (int j = 0; j < np; j++) g_rho[j] = 0;   /* no explicit dependence on the parameters */
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.json [ddm|davm|cavm|fd]\n", argv[0]);
        return 2;
    }
    mbs_error err;
    mbs_model *m = mbs_model_load(argv[1], &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    mbs_sens_options o = mbs_sens_options_default(m);
    if (argc > 2) {
        const int meth = mbs_sens_method_from_name(argv[2]);
        if (meth < 0) {
            fprintf(stderr, "%s: unknown method '%s'\n", argv[0], argv[2]);
            mbs_model_free(m);
            return 2;
        }
        o.method = (mbs_sens_method)meth;
    }
    o.objective = activity;
    mbs_sens_result r;
    if (mbs_sensitivity(m, &o, &r, &err) != MBS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        mbs_model_free(m);
        return 1;
    }
    const int k = r.nobj - 1;   /* the program's objective comes after the model's */
    printf("psi %.10g\n", r.psi[k]);
    for (int j = 0; j < r.nparam; j++)
        printf("dpsi/d%s %.10g\n", mbs_param_name(m, j), r.grad[(size_t)k * r.nparam + j]);
    mbs_sens_result_free(&r);
    mbs_model_free(m);
    return 0;
}
