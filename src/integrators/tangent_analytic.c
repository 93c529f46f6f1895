/*
 * tangent_analytic.c - the tangent of the trapezoidal rule's Newton
 * iteration from the analytical inverse-dynamics derivatives
 * (mbs_inverse_dynamics_derivatives, mbsens/derivatives.h): K = dtau/dq,
 * C = dtau/dqd, exact and about twice as fast as central differences.
 *
 * That function checks |p| = 1 to 1e-6; Newton iterates are normally far
 * closer (the drift of a step is O(h^3)), but to be safe a state further
 * off is evaluated at its normalized copy. The tangent only sets the
 * convergence rate of Newton, never the converged solution, so this costs
 * nothing in accuracy.
 */
#include <math.h>
#include <string.h>

#include "integrator_impl.h"
#include "../model_impl.h"

int mbs_tangent_analytic(void *ctx, const mbs_model *m, mbs_data *d,
                         const double *q, const double *qd, const double *qdd,
                         double *K, double *C, double *work)
{
    (void)ctx;
    const double *qe = q;
    if (mbs_integ_euler_drift(m, q) > 1e-7) {
        memcpy(work, q, sizeof(double) * (size_t)m->nq);
        if (mbs_normalize_state(m, work, NULL))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "analytical tangent: Euler parameters degenerate");
        qe = work;
    }
    return mbs_inverse_dynamics_derivatives(m, d, qe, qd, qdd, NULL, K, C);
}
