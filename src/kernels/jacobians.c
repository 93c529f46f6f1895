/*
 * jacobians.c - frame and point Jacobians, J-dot v, the centre of mass,
 * its Jacobian and the centroidal momentum, read from the kinematics that
 * mbs_kin_forward left in a workspace (docs/formulations.md, "Frame
 * Jacobians, centre of mass, centroidal momentum").
 *
 * Every column is built from the joint map b_c of its velocity (w->b, at
 * the reference point r_j of the joint's body j, world axes) and every
 * velocity product from the stored d_j (w->dv): whatever a joint's
 * velocities are, these are the quantities the kinematics defines them by.
 *
 *   frame Jacobian, world axes, point P of body b:
 *     column c of a joint j on the path of b: [b_lin + b_ang x (r_P - r_j); b_ang]
 *   J-dot v: the classical acceleration of P at zero velocity derivatives,
 *     [sum_j (d_lin + d_ang x (r_P - r_j)) + w_b x (w_b x (r_P - r_b)); sum_j d_ang]
 *   local axes: diag(A_b^T, A_b^T) J; d/dt of it: A_b^T (a0_P - w_b x v_P), A_b^T alpha0
 *   centroidal, about G: per subtree S of body j, m_S, h_S = sum m_i (r_Gi - r_G),
 *     I_S = sum (J_i + m_i [c_i]x^T [c_i]x), c_i = r_Gi - r_G; column c of j, with
 *     w = b_ang and u = b_lin + w x (r_G - r_j) the velocity of the point at G:
 *     A_G = [m_S u + w x h_S; I_S w + h_S x u],  J_G = (m_S u + w x h_S) / m.
 */
#include "kernels.h"
#include "base/algebra.h"

/* The world point of body b at local coordinates pl (NULL: the origin). */
static void world_point(const MBS_K(mbs_ws) *w, int b, const mreal *pl, mreal rP[3])
{
    if (!pl) {
        v3_copy(rP, w->o + 3 * b);
        return;
    }
    m3_mv(rP, w->A + 9 * b, pl);
    v3_add(rP, rP, w->o + 3 * b);
}

void MBS_K(mbs_frame_jac)(const mbs_model *m, const MBS_K(mbs_ws) *w, int body, const mreal *pl, int local,
                          mreal *J)
{
    const int nv = m->nv;
    for (int k = 0; k < 6 * nv; k++) J[k] = 0;
    mreal rP[3];
    world_point(w, body, pl, rP);
    const mreal *Ab = w->A + 9 * body;
    for (int j = body; j > 0; j = m->joint[j].parent) {
        const mbs_joint_info *jt = &m->joint[j];
        mreal rho[3];
        v3_sub(rho, rP, w->r + 3 * j);
        for (int k = 0; k < jt->nv; k++) {
            const mreal *b = w->b + MBS_BSTRIDE * j + 6 * k;
            mreal col[6];
            v3_cross(col, b + 3, rho);
            v3_add(col, col, b);
            v3_copy(col + 3, b + 3);
            if (local) {
                mreal t[6];
                m3_mtv(t, Ab, col);
                m3_mtv(t + 3, Ab, col + 3);
                s6_copy(col, t);
            }
            const int c = jt->voff + k;
            for (int r = 0; r < 6; r++) J[r * nv + c] = col[r];
        }
    }
}

void MBS_K(mbs_frame_jac_dot_v)(const mbs_model *m, const MBS_K(mbs_ws) *w, int body, const mreal *pl,
                                int local, mreal out[6])
{
    mreal rP[3], a0[3] = { 0, 0, 0 }, al0[3] = { 0, 0, 0 };
    world_point(w, body, pl, rP);
    for (int j = body; j > 0; j = m->joint[j].parent) {
        const mreal *dj = w->dv + 6 * j;
        mreal rho[3];
        v3_sub(rho, rP, w->r + 3 * j);
        v3_add(a0, a0, dj);
        v3_cross_add(a0, dj + 3, rho);
        v3_add(al0, al0, dj + 3);
    }
    const mreal *V = w->V + 6 * body;
    mreal rho[3], t[3], vP[3];
    v3_sub(rho, rP, w->r + 3 * body);
    v3_cross(t, V + 3, rho);
    v3_add(vP, V, t);
    v3_cross_add(a0, V + 3, t);
    if (!local) {
        v3_copy(out, a0);
        v3_copy(out + 3, al0);
        return;
    }
    const mreal *Ab = w->A + 9 * body;
    v3_cross(t, V + 3, vP);
    v3_sub(t, a0, t);
    m3_mtv(out, Ab, t);
    m3_mtv(out + 3, Ab, al0);
}

/* Velocity and acceleration of body i's CoM from its reference point. */
static void com_rates(const MBS_K(mbs_ws) *w, int i, const mreal *Vd, mreal vG[3], mreal aG[3])
{
    const mreal *V = w->V + 6 * i;
    mreal rho[3], t[3];
    v3_sub(rho, w->rG + 3 * i, w->r + 3 * i);
    v3_cross(t, V + 3, rho);
    if (vG) v3_add(vG, V, t);
    if (aG) {
        v3_copy(aG, Vd);
        v3_cross_add(aG, Vd + 3, rho);
        v3_cross_add(aG, V + 3, t);
    }
}

mreal MBS_K(mbs_com_kin)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, mreal rG[3], mreal vG[3],
                         mreal aG[3])
{
    mreal mt = 0, s[3][3] = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
    for (int i = 1; i <= m->nb; i++) {
        const mreal mi = x[m->body[i].x_mass];
        mreal v[3], a[3];
        com_rates(w, i, w->Vd + 6 * i, v, a);
        mt += mi;
        v3_axpy(s[0], mi, w->rG + 3 * i);
        v3_axpy(s[1], mi, v);
        v3_axpy(s[2], mi, a);
    }
    mreal *out[3] = { rG, vG, aG };
    for (int l = 0; l < 3; l++)
        if (out[l])
            for (int k = 0; k < 3; k++) out[l][k] = s[l][k] / mt;
    return mt;
}

void MBS_K(mbs_com_subtrees)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal rG[3],
                             mreal *sub)
{
    for (int i = 1; i <= m->nb; i++) {
        const mreal mi = x[m->body[i].x_mass];
        mreal *s = sub + MBS_COM_SUB * i, c[3];
        v3_sub(c, w->rG + 3 * i, rG);
        const mreal cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        s[0] = mi;
        v3_scale(s + 1, c, mi);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                s[4 + 3 * r + k] = w->J[9 * i + 3 * r + k] + mi * ((r == k ? cc : 0) - c[r] * c[k]);
    }
    for (int i = m->nb; i >= 1; i--) {
        const int h = m->joint[i].parent;
        if (h > 0)
            for (int k = 0; k < MBS_COM_SUB; k++) sub[MBS_COM_SUB * h + k] += sub[MBS_COM_SUB * i + k];
    }
}

void MBS_K(mbs_centroidal_columns)(const mbs_model *m, const MBS_K(mbs_ws) *w, const mreal rG[3], mreal mt,
                                   const mreal *sub, mreal *AG, mreal *JG)
{
    const int nv = m->nv;
    for (int j = 1; j <= m->nb; j++) {
        const mbs_joint_info *jt = &m->joint[j];
        const mreal *s = sub + MBS_COM_SUB * j;
        mreal rho[3];
        v3_sub(rho, rG, w->r + 3 * j);
        for (int k = 0; k < jt->nv; k++) {
            const mreal *b = w->b + MBS_BSTRIDE * j + 6 * k, *om = b + 3;
            mreal u[3], lin[3], ang[3];
            v3_cross(u, om, rho);
            v3_add(u, u, b);
            v3_scale(lin, u, s[0]);
            v3_cross_add(lin, om, s + 1);
            m3_mv(ang, s + 4, om);
            v3_cross_add(ang, s + 1, u);
            const int c = jt->voff + k;
            for (int r = 0; r < 3; r++) {
                if (AG) {
                    AG[r * nv + c] = lin[r];
                    AG[(r + 3) * nv + c] = ang[r];
                }
                if (JG) JG[r * nv + c] = lin[r] / mt;
            }
        }
    }
}

/* h_G (Vd NULL) or its rate at zero velocity derivatives (Vd: the
 * accelerations a0, 6 per body at the reference points). */
static void centroidal_sum(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal rG[3],
                           const mreal *Vd, mreal h[6])
{
    s6_zero(h);
    for (int i = 1; i <= m->nb; i++) {
        const mreal mi = x[m->body[i].x_mass];
        const mreal *Ji = w->J + 9 * i, *om = w->V + 6 * i + 3;
        mreal c[3], v[3], t[3];
        v3_sub(c, w->rG + 3 * i, rG);
        if (Vd) {
            mreal Jw[3];
            com_rates(w, i, Vd + 6 * i, NULL, v);
            m3_mv(t, Ji, Vd + 6 * i + 3);
            m3_mv(Jw, Ji, om);
            v3_cross_add(t, om, Jw);
        } else {
            com_rates(w, i, NULL, v, NULL);
            m3_mv(t, Ji, om);
        }
        v3_axpy(h, mi, v);
        v3_add(h + 3, h + 3, t);
        v3_scale(v, v, mi);
        v3_cross_add(h + 3, c, v);
    }
}

void MBS_K(mbs_centroidal_momentum_k)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                      const mreal rG[3], mreal h[6])
{
    centroidal_sum(m, x, w, rG, NULL, h);
}

void MBS_K(mbs_centroidal_momentum_dot_v_k)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                            const mreal rG[3], mreal *a0, mreal dh[6])
{
    s6_zero(a0);
    for (int i = 1; i <= m->nb; i++) {
        mreal *ai = a0 + 6 * i;
        s6_twist_shift(ai, w->a + 3 * i, a0 + 6 * m->joint[i].parent);
        for (int k = 0; k < 6; k++) ai[k] += w->dv[6 * i + k];
    }
    centroidal_sum(m, x, w, rG, a0, dh);
}
