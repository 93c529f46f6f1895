/*
 * rk4.c - classical fourth-order Runge-Kutta, fixed step, on the first-order
 * ODE y = [q; qd], ydot = [qd; FD(q, qd)] (forward dynamics of the chosen
 * formulation, fully recursive by default).
 *
 *   a1 = FD(t, q, qd)                        (the accelerations of the state)
 *   v2 = qd + h/2 a1,  a2 = FD(t + h/2, q + h/2 qd, v2)
 *   v3 = qd + h/2 a2,  a3 = FD(t + h/2, q + h/2 v2, v3)
 *   v4 = qd + h a3,    a4 = FD(t + h,   q + h v3,   v4)
 *   q+  = q  + h/6 (qd + 2 v2 + 2 v3 + v4)
 *   qd+ = qd + h/6 (a1 + 2 a2 + 2 a3 + a4)
 *
 * The accelerations at the new (projected) state are computed by the
 * common code and are a1 of the next step: four evaluations per step.
 * Stage states are not normalized: the completed forward dynamics is well
 * defined off |p| = 1.
 */
#include <stdlib.h>
#include <string.h>

#include "integrator_impl.h"

typedef struct {
    double *qs, *vs, *a2, *a3, *a4, *qn, *vn;
} rk4_ws;

static int rk4_init(mbs_integrator *it)
{
    const size_t nq = (size_t)(it->nq > 0 ? it->nq : 1), nv = (size_t)(it->nv > 0 ? it->nv : 1);
    rk4_ws *w = calloc(1, sizeof *w);
    if (!w) return MBS_ERR_NOMEM;
    it->impl = w;
    double *buf = calloc(nq + 6 * nv, sizeof(double));
    if (!buf) return MBS_ERR_NOMEM;
    w->qs = buf;
    w->vs = buf + nq;
    w->a2 = w->vs + nv;
    w->a3 = w->a2 + nv;
    w->a4 = w->a3 + nv;
    w->qn = w->a4 + nv;
    w->vn = w->qn + nv;
    return MBS_OK;
}

static void rk4_free(mbs_integrator *it)
{
    rk4_ws *w = it->impl;
    free(w->qs);
    free(w);
    it->impl = NULL;
}

/* qs = q + c v: the coordinates moved by a velocity-sized step (additive:
 * the coordinates and the velocities share their index). */
static void stage_q(const mbs_integrator *it, double *qs, const double *q, double c, const double *v)
{
    for (int k = 0; k < it->nq; k++) qs[k] = q[k] + c * v[k];
}

static int rk4_step(mbs_integrator *it, double h)
{
    rk4_ws *w = it->impl;
    const int nv = it->nv;
    const double t = it->t, *q = it->q, *qd = it->qd, *a1 = it->qdd;
    int rc;
    /* stage 2 */
    stage_q(it, w->qs, q, 0.5 * h, qd);
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + 0.5 * h * a1[k];
    if ((rc = mbs_integ_fd(it, t + 0.5 * h, w->qs, w->vs, w->a2))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] = qd[k] + 2 * w->vs[k];    /* accumulates qd + 2 v2 + 2 v3 + v4 */
        w->vn[k] = a1[k] + 2 * w->a2[k];    /* accumulates a1 + 2 a2 + 2 a3 + a4 */
    }
    /* stage 3 */
    stage_q(it, w->qs, q, 0.5 * h, w->vs);
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + 0.5 * h * w->a2[k];
    if ((rc = mbs_integ_fd(it, t + 0.5 * h, w->qs, w->vs, w->a3))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] += 2 * w->vs[k];
        w->vn[k] += 2 * w->a3[k];
    }
    /* stage 4 */
    stage_q(it, w->qs, q, h, w->vs);
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + h * w->a3[k];
    if ((rc = mbs_integ_fd(it, t + h, w->qs, w->vs, w->a4))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] += w->vs[k];
        w->vn[k] += w->a4[k];
    }
    /* new state; its accelerations follow (after the projection) */
    stage_q(it, it->q, it->q, h / 6, w->qn);
    for (int k = 0; k < nv; k++) it->qd[k] += h / 6 * w->vn[k];
    it->t = t + h;
    it->st.steps++;
    if (it->o.project && it->m->n_euler > 0) return MBS_OK;   /* qdd after the projection */
    if ((rc = mbs_integ_fd(it, it->t, it->q, it->qd, it->qdd))) {
        char cause[MBS_ERROR_MSG_LEN];
        memcpy(cause, it->msg, sizeof cause);
        return mbs_integ_fail(it, rc, "rk4: failure at t = %.9g: %s", it->t, cause);
    }
    return MBS_OK;

fail:;
    char cause[MBS_ERROR_MSG_LEN];
    memcpy(cause, it->msg, sizeof cause);
    return mbs_integ_fail(it, rc, "rk4: failure in the step from t = %.9g (h = %g): %s", t, h, cause);
}

const mbs_integ_method mbs_integ_rk4 = {
    "rk4", rk4_init, NULL, rk4_step, 1, NULL, rk4_free,
};
