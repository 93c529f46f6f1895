/*
 * constraint_kernel.c - the constraint vector, its Jacobian with respect to
 * the joint coordinates and its time derivatives (thesis §3.5-3.7;
 * docs/formulations.md §8).
 *
 * Entities (points and vectors fixed in bodies) come from the recursive
 * kinematics in w. With V_i = [v_i; w_i] the material velocity of the body
 * point at the reference point r_i and Vd_i = [a_i; alpha_i]:
 *
 *   point  r:  rd  = v_i + w_i x (r - r_i)
 *              rdd = a_i + alpha_i x (r - r_i) + w_i x (w_i x (r - r_i))
 *   vector u:  ud  = w_i x u,   udd = alpha_i x u + w_i x (w_i x u)
 *
 * Topological derivatives (thesis §6.1, elemental form): for a coordinate
 * column k of joint a on the path from the body to the ground, with b_k the
 * joint map at a's reference point r_a (w->b, w->r),
 *
 *   dr/dz_k = b_k,lin + b_k,ang x (r - r_a),   du/dz_k = b_k,ang x u,
 *
 * zero for every other column. Then Phi_q = sum over entities G_e de/dq.
 * All of this is reference-point independent: b_k,lin + b_k,ang x (r - r_a)
 * is the velocity of the body point at r per unit qd_k whatever r_a is.
 *
 * d2Phi/dt2 is evaluated from the entity accelerations in w; with the
 * kinematics run at qdd = 0 it is -c (velocity-dependent acceleration term).
 */
#include "constraint.h"
#include "base/algebra.h"
#include "kernels/functions.h"
#include "mbsens/constraints.h"

static const double TWO_PI = 6.283185307179586476925286766559;

/* Position, velocity, acceleration of the body point with local coordinates pl. */
static void point_kin(const MBS_K(mbs_ws) *w, int body, const mreal *pl, mreal *r, mreal *rd, mreal *rdd)
{
    mreal t[3], rel[3];
    m3_mv(t, w->A + 9 * body, pl);
    v3_add(r, w->o + 3 * body, t);
    if (!rd && !rdd) return;
    if (body == 0) {
        if (rd) v3_zero(rd);
        if (rdd) v3_zero(rdd);
        return;
    }
    const mreal *V = w->V + 6 * body, *om = V + 3;
    v3_sub(rel, r, w->r + 3 * body);
    if (rd) {
        v3_cross(rd, om, rel);
        v3_add(rd, rd, V);
    }
    if (rdd) {
        const mreal *Vd = w->Vd + 6 * body;
        mreal wr[3];
        v3_cross(wr, om, rel);
        v3_cross(rdd, Vd + 3, rel);
        v3_add(rdd, rdd, Vd);
        v3_cross_add(rdd, om, wr);
    }
}

/* Global vector A_body X column col, and its derivatives. */
static void vector_kin(const MBS_K(mbs_ws) *w, int body, const mreal *X, int col, mreal *u, mreal *ud,
                       mreal *udd)
{
    const mreal xc[3] = { X[col], X[3 + col], X[6 + col] };
    m3_mv(u, w->A + 9 * body, xc);
    if (!ud && !udd) return;
    if (body == 0) {
        if (ud) v3_zero(ud);
        if (udd) v3_zero(udd);
        return;
    }
    const mreal *om = w->V + 6 * body + 3;
    mreal wu[3];
    v3_cross(wu, om, u);
    if (ud) v3_copy(ud, wu);
    if (udd) {
        v3_cross(udd, w->Vd + 6 * body + 3, u);
        v3_cross_add(udd, om, wu);
    }
}

void MBS_K(mbs_con_entities)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                             const mbs_cut_info *c, mreal e[MBS_CON_NENT][3], mreal ed[MBS_CON_NENT][3],
                             mreal edd[MBS_CON_NENT][3])
{
    (void)m;
    for (int k = 0; k < MBS_CON_NENT; k++) {
        const int body = c->body[k & 1];
        mreal *pd = ed ? ed[k] : 0, *pdd = edd ? edd[k] : 0;
        if (k < 2)
            point_kin(w, body, x + (k == 0 ? c->x_ppoint : c->x_cpoint), e[k], pd, pdd);
        else
            vector_kin(w, body, x + ((k & 1) ? c->x_Xc : c->x_Xp), k >= 4 ? 1 : 0, e[k], pd, pdd);
    }
}

/* Phi_q[row + i, :] += G[i, 0..2] de/dq for the entity ev on `body`
 * (is_point: a point, else a free vector); G has row stride gs. */
static void add_jac(const mbs_model *m, const MBS_K(mbs_ws) *w, int body, int is_point, const mreal *ev,
                    const mreal *G, int gs, int nr, mreal *Phi_q, int row)
{
    const int nv = m->nv;
    for (int a = body; a > 0; a = m->joint[a].parent) {
        const mbs_joint_info *j = &m->joint[a];
        mreal rel[3];
        if (is_point) v3_sub(rel, ev, w->r + 3 * a);
        for (int k = 0; k < j->nv; k++) {
            const mreal *bc = w->b + MBS_BSTRIDE * a + 6 * k;
            mreal de[3];
            if (is_point) {
                v3_cross(de, bc + 3, rel);
                v3_add(de, de, bc);
            } else {
                v3_cross(de, bc + 3, ev);
            }
            const int col = j->voff + k;
            for (int i = 0; i < nr; i++) {
                const mreal *g = G + (size_t)i * gs;
                Phi_q[(size_t)(row + i) * nv + col] += g[0] * de[0] + g[1] * de[1] + g[2] * de[2];
            }
        }
    }
}

void MBS_K(mbs_driver_law)(const mbs_model *m, const mbs_driver_info *dr, const mreal *x, mreal t, mreal *f,
                           mreal *fd, mreal *fdd)
{
    if (dr->func < 0) {
        *f = x[dr->x] + x[dr->x + 1] * t;
        *fd = x[dr->x + 1];
        *fdd = 0;
        return;
    }
    const mbs_func_info *fi = &m->func[dr->func];
    *f = MBS_K(mbs_func_eval)(fi, x, t, fd);
    const mreal *p = x + fi->x;
    *fdd = 0;
    switch (fi->type) {
    case MBS_FUNC_STEP: {
        const mreal t0 = p[0], v0 = p[1], t1 = p[2], v1 = p[3];
        if (MRE(t) > MRE(t0) && MRE(t) < MRE(t1)) {
            const mreal h = t1 - t0, xi = (t - t0) / h;
            const mreal pdd = fi->variant ? 60 * xi - 180 * xi * xi + 120 * xi * xi * xi : 6 - 12 * xi;
            *fdd = (v1 - v0) * pdd / (h * h);
        }
        break;
    }
    case MBS_FUNC_SINE: {
        const mreal om = TWO_PI * p[1];
        *fdd = -p[0] * om * om * MSIN(om * t + p[2]);
        break;
    }
    case MBS_FUNC_SPLINE:
        *fdd = MBS_K(mbs_spline_dd)(fi, p, t);
        break;
    default:   /* constant */
        break;
    }
}

static int total_rows(const mbs_model *m)
{
    return m->con.nloop_rows + m->con.ndriver + m->n_euler;
}

/* long-function: hot kernel: one pass over the cuts, drivers and Euler
 * rows whose blocks share the row counter and scratch. */
void MBS_K(mbs_con_kernel)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *q,
                           const mreal *qd, const mreal *qdd, mreal t, mreal *phi, mreal *Phi_q, mreal *phid,
                           mreal *b, mreal *c, mreal *phidd)
{
    const int n = total_rows(m), nv = m->nv;
    mreal tmp[MBS_CON_MAXROWS], tmpd[MBS_CON_MAXROWS], tmpdd[MBS_CON_MAXROWS];
    mreal G[MBS_CON_MAXROWS * 18];
    if (Phi_q)
        for (size_t k = 0; k < (size_t)n * (size_t)nv; k++) Phi_q[k] = 0;
    const int want_d = phid || c || phidd, want_dd = c || phidd;

    /* ---- loop closure ---- */
    for (int ci = 0; ci < m->con.ncut; ci++) {
        const mbs_cut_info *cut = &m->con.cut[ci];
        const MBS_K(mbs_con_ops) *ops = MBS_K(mbs_con_ops_of)(cut->type);
        const int nr = ops->nrows, row = cut->row;
        if (nr == 0) continue;
        mreal e[MBS_CON_NENT][3], ed[MBS_CON_NENT][3], edd[MBS_CON_NENT][3];
        MBS_K(mbs_con_entities)(m, x, w, cut, e, want_d ? ed : 0, want_dd ? edd : 0);
        const mreal *ep[MBS_CON_NENT], *edp[MBS_CON_NENT], *eddp[MBS_CON_NENT];
        for (int k = 0; k < MBS_CON_NENT; k++) { ep[k] = e[k]; edp[k] = ed[k]; eddp[k] = edd[k]; }
        ops->eval(ep, want_d ? edp : 0, want_dd ? eddp : 0, tmp, tmpd, tmpdd);
        for (int i = 0; i < nr; i++) {
            if (phi) phi[row + i] = tmp[i];
            if (phid) phid[row + i] = tmpd[i];
            if (b) b[row + i] = 0;
            if (c) c[row + i] = -tmpdd[i];
            if (phidd) phidd[row + i] = tmpdd[i];
        }
        if (Phi_q) {
            for (int k = 0; k < nr * 18; k++) G[k] = 0;
            ops->jac(ep, G);
            for (int k = 0; k < MBS_CON_NENT; k++)
                if (ops->used & (1u << k))
                    add_jac(m, w, cut->body[k & 1], k < 2, e[k], G + 3 * k, 18, nr, Phi_q, row);
        }
    }

    /* ---- drivers ---- */
    for (int di = 0; di < m->con.ndriver; di++) {
        const mbs_driver_info *dr = &m->con.driver[di];
        const int row = dr->row;
        mreal f, fd, fdd;
        MBS_K(mbs_driver_law)(m, dr, x, t, &f, &fd, &fdd);
        if (dr->type == MBS_DRIVER_COORDINATE) {
            const int k = dr->coord;
            if (phi) phi[row] = q[k] - f;
            if (Phi_q) Phi_q[(size_t)row * nv + k] = 1;
            if (phid) phid[row] = (qd ? qd[k] : 0) - fd;
            if (b) b[row] = fd;
            if (c) c[row] = fdd;
            if (phidd) phidd[row] = (qdd ? qdd[k] : 0) - fdd;
        } else {
            mreal r1[3], r2[3], v1[3], v2[3], a1[3], a2[3], dv[3], dd[3], ddd[3];
            point_kin(w, dr->body[0], x + dr->x_point[0], r1, want_d ? v1 : 0, want_dd ? a1 : 0);
            point_kin(w, dr->body[1], x + dr->x_point[1], r2, want_d ? v2 : 0, want_dd ? a2 : 0);
            v3_sub(dv, r2, r1);
            const mreal L = MSQRT(v3_dot(dv, dv));
            if (phi) phi[row] = L - f;
            if (b) b[row] = fd;
            if (want_d) {
                v3_sub(dd, v2, v1);
                const mreal s = v3_dot(dv, dd);
                if (phid) phid[row] = s / L - fd;
                if (want_dd) {
                    v3_sub(ddd, a2, a1);
                    const mreal acc = (v3_dot(dd, dd) + v3_dot(dv, ddd)) / L - s * s / (L * L * L) - fdd;
                    if (c) c[row] = -acc;
                    if (phidd) phidd[row] = acc;
                }
            }
            if (Phi_q) {
                mreal g1[3], g2[3];
                v3_scale(g2, dv, 1 / L);
                v3_scale(g1, g2, -1);
                add_jac(m, w, dr->body[0], 1, r1, g1, 3, 1, Phi_q, row);
                add_jac(m, w, dr->body[1], 1, r2, g2, 3, 1, Phi_q, row);
            }
        }
    }

    /* ---- Euler-parameter normalization ---- */
    const int r0 = m->con.nloop_rows + m->con.ndriver;
    for (int e = 0; e < m->n_euler; e++) {
        const mbs_joint_info *j = &m->joint[m->con.euler_joint[e]];
        const int off = j->qoff + j->euler, voff = j->voff + j->euler, row = r0 + e;
        const mreal *p = q + off;
        const mreal *pd = qd ? qd + voff : 0, *pdd = qdd ? qdd + voff : 0;
        mreal pp = 0, ppd = 0, pdpd = 0, ppdd = 0;
        for (int k = 0; k < 4; k++) {
            pp += p[k] * p[k];
            if (pd) { ppd += p[k] * pd[k]; pdpd += pd[k] * pd[k]; }
            if (pdd) ppdd += p[k] * pdd[k];
        }
        if (phi) phi[row] = pp - 1;
        if (Phi_q)
            for (int k = 0; k < 4; k++) Phi_q[(size_t)row * nv + voff + k] = 2 * p[k];
        if (phid) phid[row] = 2 * ppd;
        if (b) b[row] = 0;
        if (c) c[row] = -2 * pdpd;
        if (phidd) phidd[row] = 2 * pdpd + 2 * ppdd;
    }
}
