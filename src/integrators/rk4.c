/*
 * rk4.c - classical fourth-order Runge-Kutta, fixed step, on the first-order
 * ODE of the state (q, v): qdot = T(q) v, vdot = FD(q, v) (forward dynamics
 * of the chosen formulation, fully recursive by default), as a Lie-group
 * method in the chart q = q_n (+) z of each step (RKMK4,
 * docs/tangent-space.md §9):
 *
 *   zdot = dexp^-1(z) v ~ v + 1/2 z x v + 1/12 z x (z x v),  vdot = FD(q_n (+) z, v)
 *
 * integrated by the classical tableau from (z, v) = (0, v_n):
 *
 *   a1 = FD(t, q, v)                                      k1 = v
 *   v2 = v + h/2 a1,  z2 = h/2 k1,  a2 = FD(t + h/2, q (+) z2, v2),  k2 = dexp^-1(z2) v2
 *   v3 = v + h/2 a2,  z3 = h/2 k2,  a3 = FD(t + h/2, q (+) z3, v3),  k3 = dexp^-1(z3) v3
 *   v4 = v + h a3,    z4 = h k3,    a4 = FD(t + h,   q (+) z4, v4),  k4 = dexp^-1(z4) v4
 *   q+ = q (+) h/6 (k1 + 2 k2 + 2 k3 + k4)
 *   v+ = v + h/6 (a1 + 2 a2 + 2 a3 + a4)
 *
 * The truncated dexp^-1 keeps order 4 (its terms up to order p - 2). For
 * a joint whose velocities are the rates of its coordinates (every joint
 * but the tangent spherical and floating ones) (+) adds and dexp^-1 is the
 * identity: the classical RK4 on [q; qd], with its operations. A tangent
 * joint's quaternion stays on |p| = 1 by construction (products of unit
 * quaternions); Euler-rate stage states are not normalized: the completed
 * forward dynamics is well defined off |p| = 1.
 *
 * The accelerations at the new (projected) state are computed by the
 * common code and are a1 of the next step: four evaluations per step.
 */
#include <stdlib.h>
#include <string.h>

#include "integrator_impl.h"
#include "joints/joint.h"
#include "joints/manifold.h"
#include "model/model_impl.h"

typedef struct {
    double *qs, *vs, *kz, *a2, *a3, *a4, *qn, *vn;
} rk4_ws;

static int rk4_init(mbs_integrator *it)
{
    const size_t nq = (size_t)(it->nq > 0 ? it->nq : 1), nv = (size_t)(it->nv > 0 ? it->nv : 1);
    rk4_ws *w = calloc(1, sizeof *w);
    if (!w) return MBS_ERR_NOMEM;
    it->impl = w;
    double *buf = calloc(nq + 7 * nv, sizeof(double));
    if (!buf) return MBS_ERR_NOMEM;
    w->qs = buf;
    w->vs = buf + nq;
    w->kz = w->vs + nv;
    w->a2 = w->kz + nv;
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

/* One tangent joint: q1 = q (+) z (q1 may be q). */
static void joint_integrate(const mbs_joint_info *jt, const double *q, const double *z, double *q1)
{
    double q0[MBS_JOINT_MAXQ];
    memcpy(q0, q, sizeof(double) * (size_t)jt->nq);
    mbs_joint_ops_of(jt->type, jt->velocities)->integrate(q0, z, q1);
}

/* The stage at z = c kz (kz: the previous stage's chart rate): the
 * coordinates qs = q (+) z and, when vs is given, its chart rate
 * kz = dexp^-1(z) vs (kz overwritten). Joints with v = qdot: qs = q + c kz,
 * kz = vs. */
static void stage(const mbs_model *m, double *qs, const double *q, double c, double *kz, const double *vs)
{
    if (m->n_quat == m->n_euler) {   /* every joint additive: one loop */
        for (int k = 0; k < m->nq; k++) qs[k] = q[k] + c * kz[k];
        if (vs) memcpy(kz, vs, sizeof(double) * (size_t)m->nv);
        return;
    }
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int qo = jt->qoff, vo = jt->voff;
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nq; k++) qs[qo + k] = q[qo + k] + c * kz[vo + k];
            if (vs) memcpy(kz + vo, vs + vo, sizeof(double) * (size_t)jt->nv);
            continue;
        }
        double z[6];
        for (int k = 0; k < jt->nv; k++) z[k] = c * kz[vo + k];
        joint_integrate(jt, q + qo, z, qs + qo);
        if (!vs) continue;
        if (jt->nv == 3) mbs_so3_dexpinv(z, vs + vo, kz + vo);
        else mbs_se3_dexpinv(z, vs + vo, kz + vo);
    }
}

static int rk4_step(mbs_integrator *it, double h)
{
    rk4_ws *w = it->impl;
    const mbs_model *m = it->m;
    const int nv = it->nv;
    const double t = it->t, *q = it->q, *qd = it->qd, *a1 = it->qdd;
    int rc;
    /* stage 2 */
    memcpy(w->kz, qd, sizeof(double) * (size_t)nv);   /* k1 = v */
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + 0.5 * h * a1[k];
    stage(m, w->qs, q, 0.5 * h, w->kz, w->vs);
    if ((rc = mbs_integ_fd(it, t + 0.5 * h, w->qs, w->vs, w->a2))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] = qd[k] + 2 * w->kz[k];    /* accumulates k1 + 2 k2 + 2 k3 + k4 */
        w->vn[k] = a1[k] + 2 * w->a2[k];    /* accumulates a1 + 2 a2 + 2 a3 + a4 */
    }
    /* stage 3 */
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + 0.5 * h * w->a2[k];
    stage(m, w->qs, q, 0.5 * h, w->kz, w->vs);
    if ((rc = mbs_integ_fd(it, t + 0.5 * h, w->qs, w->vs, w->a3))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] += 2 * w->kz[k];
        w->vn[k] += 2 * w->a3[k];
    }
    /* stage 4 */
    for (int k = 0; k < nv; k++) w->vs[k] = qd[k] + h * w->a3[k];
    stage(m, w->qs, q, h, w->kz, w->vs);
    if ((rc = mbs_integ_fd(it, t + h, w->qs, w->vs, w->a4))) goto fail;
    for (int k = 0; k < nv; k++) {
        w->qn[k] += w->kz[k];
        w->vn[k] += w->a4[k];
    }
    /* new state; its accelerations follow (after the projection) */
    stage(m, it->q, it->q, h / 6, w->qn, NULL);
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
