/*
 * tangent_analytic.c - the tangent of the trapezoidal rule's Newton
 * iteration from the analytical inverse-dynamics derivatives
 * (src/dynamics/id_derivatives.c): K = dtau/dq, C = dtau/dqd, exact (force elements
 * included) and cheaper than central differences. The unchecked entry
 * point is used: Newton iterates are slightly off |p| = 1, where the
 * derivatives are those of the residual as evaluated (A(p) by its
 * polynomial formula), like those of mbs_tangent_fd.
 */
#include "integrator_impl.h"
#include "dynamics/derivatives.h"

int mbs_tangent_analytic(void *ctx, const mbs_model *m, mbs_data *d,
                         const double *q, const double *qd, const double *qdd,
                         double *K, double *C, double *work)
{
    (void)ctx;
    (void)work;
    return mbs_deriv_id_derivatives(m, d, q, qd, qdd, NULL, K, C);
}
