/*
 * ddm_ali3p.c - direct differentiation of the discrete ALI3-P solution
 * (src/formulations/ali3p.c), semi-recursive, both reference points
 * (thesis §5.4.1, with the corrections listed in docs/formulations.md,
 * section "Sensitivities of the closed-loop formulations").
 *
 * With ' = d/d rho_j and dx_j the parameter's direction in the model
 * vector, every derivative below is ONE tangent of the residual and the
 * constraints (mbs_form_tangent) along a direction (dq, dqd, dqdd, dx):
 * the partial derivatives with respect to the state and the parameters are
 * never formed separately.
 *
 * t0. The initial state is the assembly with the model's fixed coordinates
 * held, the velocity problem (their sensitivities z0', zd0':
 * sens_loops_kinematic_init, loops_kinematic_init.c), and the penalty
 * accelerations:
 *   (M + Phi_q^T alpha Phi_q) zdd0' = -[dr + dPhi_q^T alpha psi
 *          + Phi_q^T alpha (dPhidd + 2 omega xi dPhid + omega^2 dPhi)](z0', zd0', 0, dx)
 * (psi = Phidd + 2 omega xi Phid + omega^2 Phi).
 *
 * Each step: the index-3 stage at convergence is r(z, zd*, zdd*) +
 * Phi_q^T lambda = 0, Phi(z) = 0, with z = z_p + D etc. as in ali3p.c and
 * the predictor from the previous step's PROJECTED values. Its derivative:
 *   S D' + beta h^2 Phi_q^T mu = -beta h^2 w,    Phi_q D' = -dPhi
 *   w = dr + dPhi_q^T lambda   along (z_p', zd_p', zdd_n', dx) at fixed D, lambda
 *   S = M + gamma h C + beta h^2 (K + d(Phi_q^T lambda)/dz)   (the EXACT tangent:
 *       column k is the tangent along (beta h^2 e_k, gamma h e_k, e_k))
 * solved for all parameters exactly in the singular basis of Phi_q^T
 * (lin_ali3p.c: the range part from the constraint rows, the
 * null-space part from U_N^T S U_N, one LU per step; mu = lambda' is not
 * needed, D' is unique). z' = z_p' + D', zd*' = zd_p' + gamma/(beta h) D',
 * zdd*' = zdd_n' + D'/(beta h^2).
 *
 * Projections, only where the step applied them (the record's flags),
 * with the same P_hat = M + varsigma alpha Phi_q^T Phi_q (one Cholesky):
 *   velocity  G = M (zd - zd*) + Phi_q^T sigma = 0, sigma = varsigma alpha Phid
 *             (penalty form) or the iterated multiplier:
 *     P_hat zd' = M zd*' - d(M v) - dPhi_q^T sigma - varsigma alpha Phi_q^T dPhid    (penalty)
 *     with v = zd - zd*, tangents along (z', 0, 0, dx) at fixed zd; the
 *     iterative form solves M zd' + Phi^T sigma' = ..., Phi zd' = -dPhid by
 *     the same augmented-Lagrangian iteration with P_hat.
 *   acceleration: the same with zdd, zdd*, kappa and dPhidd along
 *     (z', zd', 0, dx) at fixed zdd (c with the projected zd).
 *   d(M v) = tangent of r at (z, zd, a) minus that at (z, zd, a - v) along the
 *   same direction (r is affine in the accelerations: the Q-terms cancel);
 *   dPhid at fixed zd = its tangent along (z', zd*', 0, dx) minus Phi_q zd*'.
 * A projection that the step skipped leaves zd' = zd*' (zdd' = zdd*').
 *
 * psi is the trapezoidal quadrature of g on the steps (projected states),
 * its gradient that of dg along (z', zd', zdd', dx).
 */
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_ali3p.h"
#include "../formulations/form_impl.h"

/* ---------------------------------------------------------------- driver */

typedef struct {
    sens_run *r;
    mbs_integrator *it;
    const mbs_sim_options *so;
    sens_ali_lin *w;
    double *Y, *Yn;
} ali_ddm;

/* Y <- A Y + B, column by column through the step's linear algebra */
static int ali_advance(void *ctx, double t, double h, const double *q, const double *qd, const double *qdd,
                       mbs_error *err)
{
    ali_ddm *c = ctx;
    const int n = c->r->nq;
    const size_t N3 = 3 * (size_t)n;
    (void)t;
    (void)h;
    sens_ali_rec rec;
    sens_ali_rec_from_step(&rec, mbs_form_last_step(c->it), q, qd, qdd, n, c->w->nc, 0);
    int rc = sens_ali_lin_step(c->w, c->r, c->so, &rec, c->Y, c->Yn, err);
    if (!rc) memcpy(c->Y, c->Yn, sizeof(double) * N3 * (size_t)c->r->np);
    return rc;
}

int sens_ddm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const int n = r->nq, np = r->np;
    const size_t N3 = 3 * (size_t)n, P = (size_t)np;
    sens_ali_lin w;
    memset(&w, 0, sizeof w);
    double *buf = NULL;
    sens_fwd F;
    sens_team T;
    memset(&T, 0, sizeof T);
    int rc = sens_fwd_open(&F, r, SENS_FWD_ALI3P, err);
    if (rc) goto done;
    buf = calloc(2 * N3 * P + 1, sizeof(double));
    if (!buf || sens_ali_lin_create(&w, r->m, np)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t per = sens_ali_lin_thread_ws(&w), form = sens_ali_lin_form_ws(&w, r->m), obj = SENS_OBJ_WS(r->m, r->nobj);
    per = per > form ? per : form;
    if ((rc = sens_team_open(&T, r, np, per > obj ? per : obj, err))) goto done;
    mbs_integrator *it = F.it;
    ali_ddm c = { r, it, &F.so, &w, buf, buf + N3 * P };
    if ((rc = sens_ali_lin_init(&w, r, &F.so, F.so.t0, mbs_integrator_q(it), mbs_integrator_qd(it),
                                mbs_integrator_qdd(it), c.Y, err)))
        goto done;
    rc = sens_ddm_march(r, it, &F.so, c.Y, c.Y + n, c.Y + 2 * n, N3, ali_advance, &c, err);
done:
    if (r->team) sens_team_close(&T, r);
    sens_fwd_close(&F, stats);
    sens_ali_lin_free(&w);
    free(buf);
    return rc;
}
