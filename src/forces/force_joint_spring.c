/*
 * force_joint_spring.c - spring-damper on one joint coordinate q_k:
 *   Q_k += -k (q_k - q0) - c qd_k,   V = 1/2 k (q_k - q0)^2.
 * Any coordinate except Euler parameters (rejected at load): the angle of
 * a revolute joint, a slide, one of the cardan angles, x/y/z of a floating
 * joint whose velocities are rates (fe->coord indexes q, fe->vel the
 * velocity-sized arrays)...
 */
#include "force.h"

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)m; (void)t;
    const int k = fe->coord, kv = fe->vel;
    mreal Q = -x[fe->x_stiffness] * (q[k] - x[fe->x_free]);
    if (qd) Q -= x[fe->x_damping] * qd[kv];
    w->qfrc[kv] += Q;
}

static mreal energy(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                    const MBS_K(mbs_ws) *w, const mreal *q)
{
    (void)m; (void)w;
    const mreal s = q[fe->coord] - x[fe->x_free];
    return 0.5 * x[fe->x_stiffness] * s * s;
}

/* dQ_k = -dk (q_k - q0) - k (dq_k - dq0) - dc qd_k - c dqd_k */
static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)m; (void)w; (void)dw; (void)t;
    const int k = fe->coord, kv = fe->vel;
    const mreal K = x[fe->x_stiffness], C = x[fe->x_damping];
    mreal dQ = 0;
    if (dq) dQ -= K * dq[kv];
    if (dqd) dQ -= C * dqd[kv];
    if (dx) {
        dQ -= dx[fe->x_stiffness] * (q[k] - x[fe->x_free]) - K * dx[fe->x_free];
        if (qd) dQ -= dx[fe->x_damping] * qd[kv];
    }
    dqfrc[kv] += dQ;
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_joint_spring) = { "joint_spring", apply, energy, apply_d };
