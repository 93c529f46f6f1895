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
 * The analytical K and C (mbs_tangent_analytic) plug in through
 * mbs_sim_options.tangent with the same signature.
 */
#include <math.h>
#include <string.h>

#include "integrator_impl.h"
#include "model/model_impl.h"
#include "kernels/results.h"

#define FD_REL_STEP 6e-6

int mbs_tangent_fd(void *ctx, const mbs_model *m, mbs_data *d,
                   const double *q, const double *qd, const double *qdd,
                   double *K, double *C, double *work)
{
    (void)ctx;
    const int nq = m->nq, nv = m->nv;
    double *x = work, *xd = work + nq, *rp = xd + nv, *rm = rp + nv;
    memcpy(x, q, sizeof(double) * (size_t)nq);
    memcpy(xd, qd, sizeof(double) * (size_t)nv);
    for (int pass = 0; pass < 2; pass++) {
        double *v = pass == 0 ? x : xd;
        double *J = pass == 0 ? K : C;
        const int n = pass == 0 ? nq : nv;   /* K: by coordinate, the additive directions */
        for (int j = 0; j < n; j++) {
            const double v0 = v[j];
            const double delta = FD_REL_STEP * (fabs(v0) > 1 ? fabs(v0) : 1);
            v[j] = v0 + delta;
            const double hp = v[j] - v0;        /* the steps actually taken */
            mbs_integ_id(m, d, x, xd, qdd, rp);
            v[j] = v0 - delta;
            const double hm = v0 - v[j];
            mbs_integ_id(m, d, x, xd, qdd, rm);
            v[j] = v0;
            for (int i = 0; i < nv; i++) J[(size_t)i * nv + j] = (rp[i] - rm[i]) / (hp + hm);
        }
    }
    return mbs_data_results(d, "finite-difference tangent",
                            MBS_RESULTS({ "K", K, nv, nv, MBS_IX_COORD, MBS_IX_COORD },
                                        { "C", C, nv, nv, MBS_IX_COORD, MBS_IX_COORD }));
}
