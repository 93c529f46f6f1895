/*
 * tangent_fd.c - a tangent of the trapezoidal rule's Newton iteration
 * (the default is mbs_tangent_analytic): K = dr/dq and C = dr/dqd of the
 * inverse-dynamics residual r = ID(q, qd, qdd) by central differences.
 *
 * Step: delta_j = 6e-6 max(1, |x_j|). The truncation error of a central
 * difference is delta^2/6 |r'''| and the round-off error eps |r| / delta;
 * both are about 1e-11 relative with this step (eps = 2.2e-16), which is
 * far more than Newton needs (the tangent only sets the convergence rate,
 * not the converged solution).
 *
 * On a model with tangent velocities K is taken along the manifold
 * (docs/tangent-space.md §5): the column of velocity j of a tangent joint
 * is the central difference of r(q (+) +-delta e_j), the columns of the
 * other joints perturb their coordinates.
 *
 * The analytical K and C (mbs_tangent_analytic) plug in through
 * mbs_sim_options.tangent with the same signature.
 */
#include <math.h>
#include <string.h>

#include "integrator_impl.h"
#include "joints/joint.h"
#include "model/model_impl.h"
#include "kernels/results.h"

#define FD_REL_STEP 6e-6

/* Column c of J (nv x nv) by perturbing v[j] (x or xd, as given). */
static void additive_column(const mbs_model *m, mbs_data *d, double *x, double *xd, const double *qdd,
                            double *v, int j, double *J, int c, double *rp, double *rm)
{
    const int nv = m->nv;
    const double v0 = v[j];
    const double delta = FD_REL_STEP * (fabs(v0) > 1 ? fabs(v0) : 1);
    v[j] = v0 + delta;
    const double hp = v[j] - v0;        /* the steps actually taken */
    mbs_integ_id(m, d, x, xd, qdd, rp);
    v[j] = v0 - delta;
    const double hm = v0 - v[j];
    mbs_integ_id(m, d, x, xd, qdd, rm);
    v[j] = v0;
    for (int i = 0; i < nv; i++) J[(size_t)i * nv + c] = (rp[i] - rm[i]) / (hp + hm);
}

/* Column voff + j of K at the tangent joint jt: q_J (+) +-delta e_j. */
static void manifold_column(const mbs_model *m, mbs_data *d, const mbs_joint_info *jt, int j, double *x,
                            const double *xd, const double *qdd, double *K, double *rp, double *rm)
{
    const mbs_joint_ops *ops = mbs_joint_ops_of(jt->type, jt->velocities);
    double q0[MBS_JOINT_MAXQ], e[6] = { 0 };
    double *qj = x + jt->qoff;
    memcpy(q0, qj, sizeof(double) * (size_t)jt->nq);
    e[j] = FD_REL_STEP;
    ops->integrate(q0, e, qj);
    mbs_integ_id(m, d, x, xd, qdd, rp);
    e[j] = -FD_REL_STEP;
    ops->integrate(q0, e, qj);
    mbs_integ_id(m, d, x, xd, qdd, rm);
    memcpy(qj, q0, sizeof(double) * (size_t)jt->nq);
    const int nv = m->nv, c = jt->voff + j;
    for (int i = 0; i < nv; i++) K[(size_t)i * nv + c] = (rp[i] - rm[i]) / (2 * FD_REL_STEP);
}

int mbs_tangent_fd(void *ctx, const mbs_model *m, mbs_data *d,
                   const double *q, const double *qd, const double *qdd,
                   double *K, double *C, double *work)
{
    (void)ctx;
    const int nq = m->nq, nv = m->nv;
    double *x = work, *xd = work + nq, *rp = xd + nv, *rm = rp + nv;
    memcpy(x, q, sizeof(double) * (size_t)nq);
    memcpy(xd, qd, sizeof(double) * (size_t)nv);
    if (m->n_quat == m->n_euler) {   /* K by coordinate, the additive directions */
        for (int j = 0; j < nq; j++) additive_column(m, d, x, xd, qdd, x, j, K, j, rp, rm);
    } else {                         /* K along the manifold, joint by joint */
        for (int i = 1; i <= m->nb; i++) {
            const mbs_joint_info *jt = &m->joint[i];
            for (int j = 0; j < jt->nv; j++) {
                if (jt->velocities == MBS_VELOCITIES_TANGENT) manifold_column(m, d, jt, j, x, xd, qdd, K, rp, rm);
                else additive_column(m, d, x, xd, qdd, x, jt->qoff + j, K, jt->voff + j, rp, rm);
            }
        }
    }
    for (int j = 0; j < nv; j++) additive_column(m, d, x, xd, qdd, xd, j, C, j, rp, rm);
    return mbs_data_results(d, "finite-difference tangent",
                            MBS_RESULTS({ "K", K, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                        { "C", C, nv, nv, MBS_IX_VEL, MBS_IX_VEL }));
}
