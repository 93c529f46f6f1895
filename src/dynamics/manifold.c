/*
 * manifold.c - the public velocity map of mbsens/manifold.h: joint by
 * joint, T from the joint's table (joints/joint.h), Tdot v and T^+ for the
 * tangent joints (docs/tangent-space.md §1.1).
 */
#include <string.h>

#include "mbsens/manifold.h"
#include "base/algebra.h"
#include "joints/joint.h"
#include "joints/manifold.h"
#include "joints/joint_tangent.h"
#include "model/model_impl.h"

void mbs_velocity_map(const mbs_model *m, const double *q, double *T)
{
    if (!m || !q || !T) return;
    memset(T, 0, sizeof *T * (size_t)m->nq * (size_t)m->nv);
    double Tj[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        mbs_joint_ops_of(jt->type, jt->velocities)->velocity_map(q + jt->qoff, Tj);
        for (int r = 0; r < jt->nq; r++)
            for (int k = 0; k < jt->nv; k++)
                T[(size_t)(jt->qoff + r) * (size_t)m->nv + (size_t)(jt->voff + k)] = Tj[r * jt->nv + k];
    }
}

/* The tangent joint's blocks: p its quaternion, w the angular velocity, and
 * for a floating joint R, t-blocks. pdot = G(p)^T w / 2,
 * pddot = G(p)^T wd / 2 - |w|^2 p / 4; tdot = R nu, tddot = R (nud + w x nu). */
static void tangent_rates(const mbs_joint_info *jt, const double *qj, const double *v, const double *vd,
                          double *qd, double *qdd)
{
    const int e = jt->quat, floating = e == 3;
    const double *p = qj + e, *w = v + (floating ? 3 : 0);
    double R[9];
    if (floating) mbs_quat_rotation(p, R);
    double G[12];
    tj_quat_map(G, 3, p);
    for (int r = 0; r < 4; r++) qd[e + r] = G[3 * r] * w[0] + G[3 * r + 1] * w[1] + G[3 * r + 2] * w[2];
    if (floating) m3_mv(qd, R, v);
    if (!vd || !qdd) return;
    const double *wd = vd + (floating ? 3 : 0), ww = v3_dot(w, w);
    for (int r = 0; r < 4; r++)
        qdd[e + r] = G[3 * r] * wd[0] + G[3 * r + 1] * wd[1] + G[3 * r + 2] * wd[2] - 0.25 * ww * p[r];
    if (floating) {
        double a[3];
        v3_cross(a, w, v);
        v3_add(a, a, vd);
        m3_mv(qdd, R, a);
    }
}

int mbs_rates_from_velocity(const mbs_model *m, const double *q, const double *v, const double *vd,
                            double *qd, double *qdd)
{
    if (!m || !q || !v || !qd) return MBS_ERR_ARG;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->velocities == MBS_VELOCITIES_TANGENT) {
            tangent_rates(jt, q + jt->qoff, v + jt->voff, vd ? vd + jt->voff : NULL, qd + jt->qoff,
                          qdd ? qdd + jt->qoff : NULL);
            continue;
        }
        for (int k = 0; k < jt->nq; k++) {
            qd[jt->qoff + k] = v[jt->voff + k];
            if (vd && qdd) qdd[jt->qoff + k] = vd[jt->voff + k];
        }
    }
    return MBS_OK;
}

int mbs_velocity_from_rates(const mbs_model *m, const double *q, const double *qd, const double *qdd,
                            double *v, double *vd)
{
    if (!m || !q || !qd || !v) return MBS_ERR_ARG;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const double *qj = q + jt->qoff;
        double *vj = v + jt->voff;
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nv; k++) {
                vj[k] = qd[jt->qoff + k];
                if (qdd && vd) vd[jt->voff + k] = qdd[jt->qoff + k];
            }
            continue;
        }
        const int e = jt->quat, floating = e == 3;
        double R[9], zero[6] = { 0 }, qdt[7], b[7];
        tj_quat_omega(qj + e, qd + jt->qoff + e, vj + (floating ? 3 : 0));
        if (floating) {
            mbs_quat_rotation(qj + e, R);
            m3_mtv(vj, R, qd + jt->qoff);
        }
        if (!qdd || !vd) continue;
        /* Tdot v: the rates of vd = 0 */
        tangent_rates(jt, qj, vj, zero, qdt, b);
        for (int k = 0; k < jt->nq; k++) b[k] = qdd[jt->qoff + k] - b[k];
        double *vdj = vd + jt->voff;
        tj_quat_omega(qj + e, b + e, vdj + (floating ? 3 : 0));
        if (floating) m3_mtv(vdj, R, b);
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- integrate, difference */

/* the joint's table (its velocity convention) */
static const mbs_joint_ops *ops_of(const mbs_joint_info *jt)
{
    return mbs_joint_ops_of(jt->type, jt->velocities);
}

int mbs_integrate(const mbs_model *m, const double *q, const double *v, double dt, double *q1)
{
    if (!m || !q || !v || !q1) return MBS_ERR_ARG;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        double qj[MBS_JOINT_MAXQ], d[MBS_JOINT_MAXQ];
        memcpy(qj, q + jt->qoff, sizeof *qj * (size_t)jt->nq);   /* q1 may be q */
        for (int k = 0; k < jt->nv; k++) d[k] = v[jt->voff + k] * dt;
        ops_of(jt)->integrate(qj, d, q1 + jt->qoff);
    }
    return MBS_OK;
}

int mbs_difference(const mbs_model *m, const double *q0, const double *q1, double *v)
{
    if (!m || !q0 || !q1 || !v) return MBS_ERR_ARG;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq > 0) ops_of(jt)->difference(q0 + jt->qoff, q1 + jt->qoff, v + jt->voff);
    }
    return MBS_OK;
}

/* the nv_J x nv_J block B (row-major) times s into J (nv x nv) at the joint's velocities */
static void put_block(const mbs_model *m, const mbs_joint_info *jt, const double *B, double s, double *J)
{
    for (int r = 0; r < jt->nv; r++)
        for (int k = 0; k < jt->nv; k++)
            J[(size_t)(jt->voff + r) * (size_t)m->nv + (size_t)(jt->voff + k)] = s * B[r * jt->nv + k];
}

int mbs_integrate_jacobians(const mbs_model *m, const double *q, const double *v, double dt, double *Jq,
                            double *Jv)
{
    if (!m || !q || !v) return MBS_ERR_ARG;
    const size_t nn = (size_t)m->nv * (size_t)m->nv;
    if (Jq) memset(Jq, 0, sizeof *Jq * nn);
    if (Jv) memset(Jv, 0, sizeof *Jv * nn);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        double d[MBS_JOINT_MAXQ], A[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ], B[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ];
        for (int k = 0; k < jt->nv; k++) d[k] = v[jt->voff + k] * dt;
        ops_of(jt)->integrate_jacobians(q + jt->qoff, d, A, B);
        if (Jq) put_block(m, jt, A, 1, Jq);
        if (Jv) put_block(m, jt, B, dt, Jv);
    }
    return MBS_OK;
}

/* With d = q0 (-) q1, q0 (+) d = q1 differentiated gives
 * dd/dq1 = J_r(d)^-1 and dd/dq0 = -J_r(d)^-1 Ad(exp d)^-1 (joints/manifold.h:
 * the closed forms of J_r^-1; I and -I on additive joints). */
int mbs_difference_jacobians(const mbs_model *m, const double *q0, const double *q1, double *J0, double *J1)
{
    if (!m || !q0 || !q1) return MBS_ERR_ARG;
    const size_t nn = (size_t)m->nv * (size_t)m->nv;
    if (J0) memset(J0, 0, sizeof *J0 * nn);
    if (J1) memset(J1, 0, sizeof *J1 * nn);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        const int n = jt->nv;
        double d[MBS_JOINT_MAXQ], Ji[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ], A[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ];
        double P[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ];
        if (jt->velocities == MBS_VELOCITIES_TANGENT) {
            ops_of(jt)->difference(q0 + jt->qoff, q1 + jt->qoff, d);
            if (jt->quat == 3) {
                mbs_se3_jr_inv(d, Ji);
                mbs_se3_ad_inv(d, A);
            } else {
                mbs_so3_jr_inv(d, Ji);
                mbs_so3_ad_inv(d, A);
            }
        } else {
            for (int k = 0; k < n * n; k++) Ji[k] = A[k] = k % (n + 1) == 0;
        }
        for (int r = 0; r < n; r++)
            for (int k = 0; k < n; k++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += Ji[r * n + l] * A[l * n + k];
                P[r * n + k] = s;
            }
        if (J0) put_block(m, jt, P, -1, J0);
        if (J1) put_block(m, jt, Ji, 1, J1);
    }
    return MBS_OK;
}
