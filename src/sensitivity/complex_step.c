/*
 * complex_step.c - complex-step reference over whole simulations: the RK4
 * scheme of ddm_rk4.c run on the complex build of the kernels with the
 * model vector x + i h dx_j, one run per parameter. Im(psi)/h is the exact
 * derivative of the RK4-discretized psi (no subtractive cancellation,
 * h = 1e-30), the reference for the fully recursive DDM.
 *
 * Compiled with mreal = double complex (it drives the *_cs kernels).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "kernels/kernels.h"
#include "forces/force.h"
#include "base/error.h"

int mbs_sens_complex_step_rk4(const mbs_model *m, const mbs_sim_options *so, double *psi,
                              double *grad, mbs_error *err);

static const double H = 1e-30;

/* qdd and g (integral or terminal part of every objective) at a stage */
static int stage_cs(const mbs_model *m, const mreal *x, mbs_ws_cs *w, mreal t, const mreal *q,
                    const mreal *qd, mreal *qdd, mreal *g, int terminal)
{
    mbs_kin_forward_cs(m, x, w, q, qd, NULL, 1);
    for (int k = 0; k < 15 * (m->nb + 1); k++) w->xfrc[k] = 0;
    for (int k = 0; k < m->nv; k++) w->qfrc[k] = 0;
    mbs_forces_apply_cs(m, x, w, q, qd, t);
    mbs_body_terms_cs(m, x, w);
    if (mbs_aba_cs(m, w, q, qd, NULL, qdd) != 0) return -1;
    for (int k = 0; k < m->nobj; k++) g[k] = mbs_objective_integrand_cs(m, x, w, k, terminal, q, qd, qdd, NULL, t);
    return 0;
}

static int run(const mbs_model *m, const mbs_sim_options *so, const mreal *x, mbs_ws_cs *w,
               mreal *buf, mreal *psi, mbs_error *err)
{
    const int nq = m->nq, no = m->nobj;
    const size_t n = (size_t)(nq > 0 ? nq : 1), O = (size_t)(no > 0 ? no : 1);
    mreal *yq = buf, *yqd = yq + n, *q = yqd + n, *qd = q + n, *g = qd + n;
    mreal *kq[4], *kqd[4], *kg[4];
    mreal *p = g + O;
    for (int s = 0; s < 4; s++) { kq[s] = p; p += n; kqd[s] = p; p += n; kg[s] = p; p += O; }
    double *q0 = malloc(8 * n), *qd0 = malloc(8 * n);
    if (!q0 || !qd0) { free(q0); free(qd0); return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); }
    mbs_model_initial_state(m, q0, qd0);
    mbs_normalize_state(m, q0, qd0);
    for (int k = 0; k < nq; k++) { yq[k] = q0[k]; yqd[k] = qd0[k]; }
    free(q0);
    free(qd0);
    for (int k = 0; k < no; k++) psi[k] = 0;
    static const double c[4] = { 0, 0.5, 0.5, 1 }, wgt[4] = { 1, 2, 2, 1 };
    double t = so->t0;
    while (t < so->tf - 1e-12 * fmax(1, fabs(so->tf))) {
        const double h = fmin(so->dt, so->tf - t);
        for (int s = 0; s < 4; s++) {
            for (int k = 0; k < nq; k++) {
                q[k] = yq[k] + (s ? c[s] * h * kq[s - 1][k] : 0);
                qd[k] = yqd[k] + (s ? c[s] * h * kqd[s - 1][k] : 0);
                kq[s][k] = qd[k];
            }
            if (stage_cs(m, x, w, t + c[s] * h, q, qd, kqd[s], kg[s], 0))
                return mbs_error_set(err, MBS_ERR_NUMERIC, "complex step: forward dynamics failed at t = %.9g", t);
        }
        for (int k = 0; k < nq; k++) {
            yq[k] += h / 6 * (kq[0][k] + 2 * kq[1][k] + 2 * kq[2][k] + kq[3][k]);
            yqd[k] += h / 6 * (kqd[0][k] + 2 * kqd[1][k] + 2 * kqd[2][k] + kqd[3][k]);
        }
        for (int k = 0; k < no; k++)
            for (int s = 0; s < 4; s++) psi[k] += h / 6 * wgt[s] * kg[s][k];
        t += h;
    }
    if (stage_cs(m, x, w, t, yq, yqd, q, g, 1))
        return mbs_error_set(err, MBS_ERR_NUMERIC, "complex step: forward dynamics failed at t = %.9g", t);
    for (int k = 0; k < no; k++) psi[k] += g[k];
    return MBS_OK;
}

int mbs_sens_complex_step_rk4(const mbs_model *m, const mbs_sim_options *so, double *psi,
                              double *grad, mbs_error *err)
{
    const int no = m->nobj, np = m->nparam;
    const size_t n = (size_t)(m->nq > 0 ? m->nq : 1), O = (size_t)(no > 0 ? no : 1);
    mbs_ws_cs w;
    memset(&w, 0, sizeof w);
    mreal *x = calloc((size_t)m->nx + 1, sizeof(mreal));
    mreal *buf = calloc(4 * n + O + 4 * (2 * n + O), sizeof(mreal));
    mreal *ps = calloc(O, sizeof(mreal));
    int rc = MBS_OK;
    if (!x || !buf || !ps || mbs_ws_init_cs(&w, m) != 0) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    w.ref = so->ref;
    for (int j = -1; j < np && !rc; j++) {
        for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
        if (j >= 0) {
            const mbs_param_info *p = &m->param[j];
            for (int t = 0; t < p->ntargets; t++) x[p->target[t]] += I * H * p->scale[t];
        }
        rc = run(m, so, x, &w, buf, ps, err);
        for (int k = 0; k < no && !rc; k++) {
            if (j < 0) psi[k] = creal(ps[k]);
            else grad[k * np + j] = cimag(ps[k]) / H;
        }
    }
done:
    mbs_ws_free_cs(&w);
    free(x);
    free(buf);
    free(ps);
    return rc;
}
