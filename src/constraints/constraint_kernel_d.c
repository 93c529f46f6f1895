/*
 * constraint_kernel_d.c - tangent (directional derivative) of the
 * constraint kernel of constraint_kernel.c, for the closed-loop
 * formulations and their sensitivities (src/formulations/,
 * src/sensitivity/ddm_ali3p.c, ddm_matrixr.c; docs/formulations.md,
 * "Closed-loop formulations").
 *
 * Along a direction (dq, dqd, dqdd) in the state and dx in the model
 * vector, it gives the tangents of Phi, of the Jacobian Phi_q (all of it,
 * n x nv), of dPhi/dt and of d2Phi/dt2 = Phi_q qdd - c at the qdd the
 * primal kinematics ran with. Every derivative the formulations need is a
 * contraction of these: Phi_qq^T w (columns along unit directions), the
 * parameter derivatives Phi_rho, Phi_q,rho, Phidd_rho (directions in x),
 * and the c-terms of the sensitivity equations, dc = dPhi_q qdd + Phi_q dqdd
 * - d(phidd).
 *
 * Loop closure. Every cut type's equations are at most bilinear in the six
 * entities (points and vectors of the two joint frames), so their Jacobian
 * G(e) = dPhi/de is affine in e and (exactly, without cancellation)
 *     dG = G(de) - G(0).
 * With that, for entity tangents de, ded, dedd:
 *     dphi   = G(e) de
 *     dphid  = G(e) ded + dG ed
 *     dphidd = G(e) dedd + dG edd + 2 (G(ed) - G(0)) ded
 * (phidd = G(e) edd + (G(ed) - G(0)) ed). Entity tangents (point p̄ of
 * body i, vector X e_k; V = [v; w], Vd = [a; al] at the reference point
 * r_i, rel = r - r_i):
 *     dr    = do + dA p̄ + A dp̄
 *     drd   = dv + dw x rel + w x drel,       drel = dr - dr_i
 *     drdd  = da + dal x rel + al x drel + dw x (w x rel) + w x (dw x rel + w x drel)
 *     du    = dA X e_k + A dX e_k,   dud = dw x u + w x du
 *     dudd  = dal x u + al x du + dw x (w x u) + w x (dw x u + w x du)
 * Jacobian columns (topological derivatives, constraint_kernel.c) and their
 * tangents, for coordinate k of an ancestor joint a with map b_k = [bl; bw]
 * at r_a:
 *     point:  J = bl + bw x (r - r_a),  dJ = dbl + dbw x (r - r_a) + bw x (dr - dr_a)
 *     vector: J = bw x u,               dJ = dbw x u + bw x du
 *     dPhi_q[:, k] = sum_e dG_e J_e,k + G_e dJ_e,k.
 *
 * Drivers: the coordinate driver q_k - f(t) and the distance driver
 * |r2 - r1| - f(t) differentiate directly; the time law's numbers (linear
 * law, constant, step, sine) may be in the direction dx (driver_law_d).
 * Euler rows p.p - 1: dphi = 2 p.dp, dPhi_q = 2 dp^T, dphid = 2 (dp.pd +
 * p.dpd), dphidd = 4 pd.dpd + 2 (dp.pdd + p.dpdd).
 *
 * Time is not differentiated. Tested against the complex-step build of
 * mbs_con_kernel (tests/test_constraint_tangents.c; sparse directions:
 * tests/test_tangent_sparse.c).
 *
 * Cost: the entities' tangents only to the level the outputs need; dG and
 * Gd dropped where G(de), G(ed) equal G(0) bit for bit (the types with
 * constant G); the contractions over the non-zero entries of G's blocks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "base/algebra.h"
#include "kernels/functions.h"
#include "mbsens/constraints.h"

static const double TWO_PI = 6.283185307179586476925286766559;
static const mreal zero3[3];

/* A non-zero entry of a constraint row block G_k (rows x 3) of one entity:
 * row i, component c, value v. The blocks are sparse (the revolute,
 * spherical and fixed cuts: one +-1 per row), so the contractions below run
 * over these entries only. */
typedef struct {
    int i, c;
    mreal v;
} gentry;

/* 1 if v is zero (+0 or -0; both parts, complex) */
#ifdef MBS_COMPLEX
static inline int is_zero(mreal v) { return v == 0; }
#else
static inline int is_zero(double v)
{
    uint64_t a;
    memcpy(&a, &v, 8);
    return (a << 1) == 0;
}
#endif

/* 1 if the 3-vector is zero */
#ifdef MBS_COMPLEX
static inline int v3_is_zero(const mreal *v) { return (v[0] == 0) & (v[1] == 0) & (v[2] == 0); }
#else
static inline int v3_is_zero(const double *v)
{
    uint64_t a, b, c;
    memcpy(&a, v, 8);
    memcpy(&b, v + 1, 8);
    memcpy(&c, v + 2, 8);
    return ((a | b | c) << 1) == 0;
}
#endif

/* the non-zero entries of the block at column 3 k of an nr x 18 row-major G */
static int block_entries(const mreal *G, int nr, int k, gentry *out)
{
    int n = 0;
    for (int i = 0; i < nr; i++) {
        const mreal *g = G + 18 * i + 3 * k;
        if (v3_is_zero(g)) continue;
        for (int c = 0; c < 3; c++) {
            if (is_zero(g[c])) continue;
            out[n].i = i;
            out[n].c = c;
            out[n].v = g[c];
            n++;
        }
    }
    return n;
}

/* One entity on a body for add_jac_d: a point (r - r_a enters J) or a
 * vector, its value and tangent, and the entries of its blocks of G, dG. */
typedef struct {
    int is_point;
    const mreal *ev, *dev;
    const gentry *ge, *dge;
    int nge, ndge;
} jentity;

/* Jacobian rows of the entities ent[0..ne-1], all on `body`, and their
 * tangent: for every coordinate column of the path from `body` to the
 * ground (walked once for all of them),
 *   dPhi_q[row + i, col] += dG[i] . J + G[i] . dJ
 * over the entries of G and dG (J is not formed when dG = 0). */
static void add_jac_d_body(const mbs_model *m, const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body,
                           const jentity *ent, int ne, mreal *dPhi_q, int row)
{
    const int nv = m->nv;
    for (int a = body; a > 0; a = m->joint[a].parent) {
        const mbs_joint_info *j = &m->joint[a];
        const mreal *ra = w->r + 3 * a, *dra = dw->r + 3 * a;
        for (int k = 0; k < j->nv; k++) {
            const mreal *bc = w->b + MBS_BSTRIDE * a + 6 * k, *dbc = dw->b + MBS_BSTRIDE * a + 6 * k;
            mreal *out = dPhi_q + (size_t)row * nv + j->voff + k;
            for (int n = 0; n < ne; n++) {
                const jentity *en = &ent[n];
                mreal J[3] = { 0, 0, 0 }, dJ[3];
                if (en->is_point) {
                    mreal rel[3], drel[3];
                    v3_sub(rel, en->ev, ra);
                    v3_sub(drel, en->dev, dra);
                    if (en->ndge) {
                        v3_cross(J, bc + 3, rel);
                        v3_add(J, J, bc);
                    }
                    v3_cross(dJ, dbc + 3, rel);
                    v3_cross_add(dJ, bc + 3, drel);
                    v3_add(dJ, dJ, dbc);
                } else {
                    if (en->ndge) v3_cross(J, bc + 3, en->ev);
                    v3_cross(dJ, dbc + 3, en->ev);
                    v3_cross_add(dJ, bc + 3, en->dev);
                }
                for (int e = 0; e < en->ndge; e++) out[(size_t)en->dge[e].i * nv] += en->dge[e].v * J[en->dge[e].c];
                for (int e = 0; e < en->nge; e++) out[(size_t)en->ge[e].i * nv] += en->ge[e].v * dJ[en->ge[e].c];
            }
        }
    }
}

/* The same for one entity. */
static void add_jac_d(const mbs_model *m, const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body, int is_point,
                      const mreal *ev, const mreal *dev, const gentry *ge, int nge, const gentry *dge, int ndge,
                      mreal *dPhi_q, int row)
{
    if (!nge && !ndge) return;
    const jentity en = { is_point, ev, dev, ge, dge, nge, ndge };
    add_jac_d_body(m, w, dw, body, &en, 1, dPhi_q, row);
}

/* the three entries of a single row g, dg (drivers, point components) */
static void add_jac_d_row(const mbs_model *m, const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body,
                          const mreal *ev, const mreal *dev, const mreal *g, const mreal *dg, mreal *dPhi_q, int row)
{
    gentry ge[3], dge[3];
    for (int c = 0; c < 3; c++) {
        ge[c].i = dge[c].i = 0;
        ge[c].c = dge[c].c = c;
        ge[c].v = g[c];
        dge[c].v = dg ? dg[c] : 0;
    }
    add_jac_d(m, w, dw, body, 1, ev, dev, ge, 3, dge, dg ? 3 : 0, dPhi_q, row);
}

void MBS_K(mbs_driver_law_d)(const mbs_model *m, const mbs_driver_info *dr, const mreal *x, const mreal *dx,
                             mreal t, mreal *df, mreal *dfd, mreal *dfdd)
{
    *df = *dfd = *dfdd = 0;
    if (!dx) return;
    if (dr->func < 0) {
        *df = dx[dr->x] + dx[dr->x + 1] * t;
        *dfd = dx[dr->x + 1];
        return;
    }
    const mbs_func_info *fi = &m->func[dr->func];
    const mreal *p = x + fi->x, *dp = dx + fi->x;
    switch (fi->type) {
    case MBS_FUNC_CONSTANT:
        *df = dp[0];
        break;
    case MBS_FUNC_STEP: {
        const mreal t0 = p[0], v0 = p[1], t1 = p[2], v1 = p[3];
        if (MRE(t) <= MRE(t0)) {
            *df = dp[1];
        } else if (MRE(t) >= MRE(t1)) {
            *df = dp[3];
        } else {
            const mreal h = t1 - t0, xi = (t - t0) / h, dh = dp[2] - dp[0];
            const mreal dxi = (-dp[0] - xi * dh) / h, dv = v1 - v0, ddv = dp[3] - dp[1];
            mreal s, s1, s2, s3;
            if (fi->variant) {
                s = xi * xi * xi * (10 - 15 * xi + 6 * xi * xi);
                s1 = 30 * xi * xi * (1 - xi) * (1 - xi);
                s2 = 60 * xi - 180 * xi * xi + 120 * xi * xi * xi;
                s3 = 60 - 360 * xi + 360 * xi * xi;
            } else {
                s = xi * xi * (3 - 2 * xi);
                s1 = 6 * xi * (1 - xi);
                s2 = 6 - 12 * xi;
                s3 = -12;
            }
            *df = dp[1] + ddv * s + dv * s1 * dxi;
            *dfd = ddv * s1 / h + dv * s2 * dxi / h - dv * s1 * dh / (h * h);
            *dfdd = ddv * s2 / (h * h) + dv * s3 * dxi / (h * h) - 2 * dv * s2 * dh / (h * h * h);
        }
        break;
    }
    case MBS_FUNC_SINE: {
        const mreal A = p[0], om = TWO_PI * p[1], ph = om * t + p[2];
        const mreal dA = dp[0], dom = TWO_PI * dp[1], dph = dom * t + dp[2];
        const mreal s = MSIN(ph), co = MCOS(ph);
        *df = dp[3] + dA * s + A * co * dph;
        *dfd = dA * om * co + A * dom * co - A * om * s * dph;
        *dfdd = -dA * om * om * s - 2 * A * om * dom * s - A * om * om * co * dph;
        break;
    }
    case MBS_FUNC_SPLINE:   /* linear in its values: the spline of the direction */
        *df = MBS_K(mbs_func_eval)(fi, dx, t, dfd);
        *dfdd = MBS_K(mbs_spline_dd)(fi, dp, t);
        break;
    default:
        *df = MBS_K(mbs_func_eval_d)(fi, x, dx, t);
        break;
    }
}

/* ---------------------------------------------------------------- per-state cache
 *
 * Everything of a cut that depends on the primal state alone: the entities
 * e, ed, edd (with rel = r - r_i and w x rel of the points), G(e), G(0),
 * Gd = G(ed) - G(0) and the non-zero entries of G's and Gd's blocks. The
 * step linearization asks for many directions at one state, so this is
 * computed once and reused by every direction.
 *
 * Staleness is impossible by construction: an entry stores the bits of
 * every input of its computation (the pose, velocities and accelerations
 * of the cut's two bodies in w: A, o, r, V, Vd; the cut's points and triads
 * in x) and is reused only when those bits equal the present ones
 * (memcmp), so a reused entry is exactly what the computation would give
 * now. No counter to keep in step with the writers of w; a workspace whose
 * kinematics is run again at the same state (same bits) keeps its
 * entries.
 * The entry is always filled to level 2 (accelerations); quantities a call
 * does not need are not read. */
#define CC_BODYKEY (9 + 3 + 3 + 6 + 6)
#define CC_KEY (2 * CC_BODYKEY + 3 + 3 + 9 + 9)

struct MBS_K(mbs_con_cache) {
    int valid;
    mreal key[CC_KEY];
    mreal e[MBS_CON_NENT][3], ed[MBS_CON_NENT][3], edd[MBS_CON_NENT][3];
    mreal rel[2][3], wr[2][3];   /* the points: r - r_i, w x (r - r_i) */
    mreal G[MBS_CON_MAXROWS * 18], G0[MBS_CON_MAXROWS * 18], Gd[MBS_CON_MAXROWS * 18];
    int Gd0;                     /* G(ed) = G(0) bit for bit */
    gentry ge[MBS_CON_NENT][3 * MBS_CON_MAXROWS], gde[MBS_CON_NENT][3 * MBS_CON_MAXROWS];
    int nge[MBS_CON_NENT], ngde[MBS_CON_NENT];
};

int MBS_K(mbs_con_cache_attach)(MBS_K(mbs_ws) *w, const mbs_model *m)
{
    if (m->con.ncut <= 0 || w->ccache) return 0;
    w->ccache = calloc((size_t)m->con.ncut, sizeof(struct MBS_K(mbs_con_cache)));
    return w->ccache ? 0 : -1;
}

void MBS_K(mbs_con_cache_scribble)(MBS_K(mbs_ws) *w, const mbs_model *m, uint64_t *s)
{
    struct MBS_K(mbs_con_cache) *c = w->ccache;
    for (int k = 0; c && k < m->con.ncut; k++) {
        MBS_K(mbs_scribble_bytes)(c + k, sizeof *c, s);
        c[k].valid = 1;
    }
}

/* the inputs of cut c's per-state quantities, gathered into key */
static void cache_key(const mreal *x, const MBS_K(mbs_ws) *w, const mbs_cut_info *c, mreal *key)
{
    mreal *k = key;
    for (int s = 0; s < 2; s++) {
        const int b = c->body[s];
        memcpy(k, w->A + 9 * b, 9 * sizeof(mreal)); k += 9;
        memcpy(k, w->o + 3 * b, 3 * sizeof(mreal)); k += 3;
        memcpy(k, w->r + 3 * b, 3 * sizeof(mreal)); k += 3;
        memcpy(k, w->V + 6 * b, 6 * sizeof(mreal)); k += 6;
        memcpy(k, w->Vd + 6 * b, 6 * sizeof(mreal)); k += 6;
    }
    memcpy(k, x + c->x_ppoint, 3 * sizeof(mreal)); k += 3;
    memcpy(k, x + c->x_cpoint, 3 * sizeof(mreal)); k += 3;
    memcpy(k, x + c->x_Xp, 9 * sizeof(mreal)); k += 9;
    memcpy(k, x + c->x_Xc, 9 * sizeof(mreal));
}

/* a body point (pl in body coordinates) and its time derivatives, with
 * rel = r - r_body and w x rel for the tangent */
static void point_primal(const MBS_K(mbs_ws) *w, int body, const mreal *pl, mreal *r, mreal *rd, mreal *rdd,
                         mreal *rel, mreal *wr)
{
    const mreal *A = w->A + 9 * body;
    mreal t[3];
    m3_mv(t, A, pl);
    v3_add(r, w->o + 3 * body, t);
    if (body == 0) {
        v3_zero(rd);
        v3_zero(rdd);
        v3_zero(rel);
        v3_zero(wr);
        return;
    }
    const mreal *V = w->V + 6 * body, *om = V + 3, *Vd = w->Vd + 6 * body, *al = Vd + 3;
    v3_sub(rel, r, w->r + 3 * body);
    v3_cross(rd, om, rel);
    v3_add(rd, rd, V);
    v3_cross(wr, om, rel);
    v3_cross(rdd, al, rel);
    v3_add(rdd, rdd, Vd);
    v3_cross_add(rdd, om, wr);
}

/* the tangents of point_primal's outputs along (dw, dpl), to level lev */
static inline void point_tangent(const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body, const mreal *pl,
                                 const mreal *dpl, const mreal *rel, const mreal *wr, mreal *dr, mreal *drd,
                                 mreal *drdd, int lev)
{
    const mreal *A = w->A + 9 * body;
    if (body == 0) {
        m3_mv(dr, A, dpl ? dpl : zero3);
        if (lev >= 1) v3_zero(drd);
        if (lev >= 2) v3_zero(drdd);
        return;
    }
    mreal t[3];
    m3_mv(dr, dw->A + 9 * body, pl);
    v3_add(dr, dr, dw->o + 3 * body);
    if (dpl) {
        m3_mv(t, A, dpl);
        v3_add(dr, dr, t);
    }
    if (lev < 1) return;
    const mreal *om = w->V + 6 * body + 3, *al = w->Vd + 6 * body + 3;
    const mreal *dV = dw->V + 6 * body, *dom = dV + 3, *dVd = dw->Vd + 6 * body, *dal = dVd + 3;
    mreal drel[3], dwr[3];
    v3_sub(drel, dr, dw->r + 3 * body);
    v3_copy(drd, dV);
    v3_cross_add(drd, dom, rel);
    v3_cross_add(drd, om, drel);
    if (lev < 2) return;
    v3_cross(dwr, dom, rel);
    v3_cross_add(dwr, om, drel);
    v3_copy(drdd, dVd);
    v3_cross_add(drdd, dal, rel);
    v3_cross_add(drdd, al, drel);
    v3_cross_add(drdd, dom, wr);
    v3_cross_add(drdd, om, dwr);
}

/* A body point (pl in body coordinates, dpl its tangent in x) with its
 * time derivatives and their tangents along (dw, dx) */
static void point_kin_d(const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body, const mreal *pl,
                        const mreal *dpl, mreal *r, mreal *rd, mreal *rdd, mreal *dr, mreal *drd, mreal *drdd)
{
    mreal rel[3], wr[3];
    point_primal(w, body, pl, r, rd, rdd, rel, wr);
    point_tangent(w, dw, body, pl, dpl, rel, wr, dr, drd, drdd, 2);
}

/* the primal part of a body vector (column col of A X) at level 2 */
static void vector_primal(const MBS_K(mbs_ws) *w, int body, const mreal *X, int col, mreal *u, mreal *ud,
                          mreal *udd)
{
    const mreal xc[3] = { X[col], X[3 + col], X[6 + col] };
    m3_mv(u, w->A + 9 * body, xc);
    if (body == 0) {
        v3_zero(ud);
        v3_zero(udd);
        return;
    }
    const mreal *om = w->V + 6 * body + 3, *al = w->Vd + 6 * body + 3;
    mreal wu[3];
    v3_cross(wu, om, u);
    v3_copy(ud, wu);
    v3_cross(udd, al, u);
    v3_cross_add(udd, om, wu);
}

/* the tangents of vector_primal's outputs (wu = ud) */
static inline void vector_tangent(const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int body, const mreal *X,
                                  const mreal *dX, int col, const mreal *u, const mreal *wu, mreal *du, mreal *dud,
                                  mreal *dudd, int lev)
{
    const mreal *A = w->A + 9 * body;
    if (dX) {
        const mreal dxc[3] = { dX[col], dX[3 + col], dX[6 + col] };
        m3_mv(du, A, dxc);
    } else {
        v3_zero(du);
    }
    if (body == 0) {
        if (lev >= 1) v3_zero(dud);
        if (lev >= 2) v3_zero(dudd);
        return;
    }
    const mreal xc[3] = { X[col], X[3 + col], X[6 + col] };
    mreal t[3];
    m3_mv(t, dw->A + 9 * body, xc);
    v3_add(du, du, t);
    if (lev < 1) return;
    const mreal *om = w->V + 6 * body + 3, *al = w->Vd + 6 * body + 3;
    const mreal *dom = dw->V + 6 * body + 3, *dal = dw->Vd + 6 * body + 3;
    mreal dwu[3];
    v3_cross(dwu, dom, u);
    v3_cross_add(dwu, om, du);
    v3_copy(dud, dwu);
    if (lev < 2) return;
    v3_cross(dudd, dal, u);
    v3_cross_add(dudd, al, du);
    v3_cross_add(dudd, dom, wu);
    v3_cross_add(dudd, om, dwu);
}

/* Fill cc (cut c, type ops) at the primal state in (x, w), key already in cc. */
static void cache_fill(const mreal *x, const MBS_K(mbs_ws) *w, const mbs_cut_info *c,
                       const MBS_K(mbs_con_ops) *ops, struct MBS_K(mbs_con_cache) *cc)
{
    const int nr = ops->nrows, ng = nr * 18;
    const unsigned used = ops->used;
    for (int k = 0; k < MBS_CON_NENT; k++) {
        if (!(used & (1u << k))) {
            /* entities a type does not use are never read: zeros */
            v3_zero(cc->e[k]); v3_zero(cc->ed[k]); v3_zero(cc->edd[k]);
            if (k < 2) { v3_zero(cc->rel[k]); v3_zero(cc->wr[k]); }
            continue;
        }
        const int body = c->body[k & 1];
        if (k < 2)
            point_primal(w, body, x + (k == 0 ? c->x_ppoint : c->x_cpoint), cc->e[k], cc->ed[k], cc->edd[k],
                         cc->rel[k], cc->wr[k]);
        else
            vector_primal(w, body, x + ((k & 1) ? c->x_Xc : c->x_Xp), k >= 4 ? 1 : 0, cc->e[k], cc->ed[k],
                          cc->edd[k]);
    }
    mreal z[MBS_CON_NENT][3];
    const mreal *ep[MBS_CON_NENT], *edp[MBS_CON_NENT], *zp[MBS_CON_NENT];
    for (int k = 0; k < MBS_CON_NENT; k++) {
        ep[k] = cc->e[k];
        edp[k] = cc->ed[k];
        v3_zero(z[k]);
        zp[k] = z[k];
    }
    for (int k = 0; k < ng; k++) cc->G[k] = cc->G0[k] = cc->Gd[k] = 0;
    ops->jac(ep, cc->G);
    ops->jac(zp, cc->G0);
    ops->jac(edp, cc->Gd);
    cc->Gd0 = !memcmp(cc->Gd, cc->G0, sizeof(mreal) * (size_t)ng);
    if (!cc->Gd0)
        for (int k = 0; k < ng; k++) cc->Gd[k] -= cc->G0[k];
    for (int k = 0; k < MBS_CON_NENT; k++) {
        cc->nge[k] = cc->ngde[k] = 0;
        if (!(used & (1u << k))) continue;
        cc->nge[k] = block_entries(cc->G, nr, k, cc->ge[k]);
        if (!cc->Gd0) cc->ngde[k] = block_entries(cc->Gd, nr, k, cc->gde[k]);
    }
    cc->valid = 1;
}

/* The per-state quantities of cut ci: w's cache entry if its key matches
 * (else refilled), or `own` when w has no cache. */
static const struct MBS_K(mbs_con_cache) *cache_get(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                                    int ci, const MBS_K(mbs_con_ops) *ops,
                                                    struct MBS_K(mbs_con_cache) *own)
{
    const mbs_cut_info *c = &m->con.cut[ci];
    struct MBS_K(mbs_con_cache) *cc = w->ccache ? w->ccache + ci : own;
    mreal key[CC_KEY];
    cache_key(x, w, c, key);
    if (cc != own && cc->valid && !memcmp(key, cc->key, sizeof key)) return cc;
    memcpy(cc->key, key, sizeof key);
    cache_fill(x, w, c, ops, cc);
    return cc;
}

static int total_rows(const mbs_model *m)
{
    return m->con.nloop_rows + m->con.ndriver + m->n_euler;
}

/* The pieces of mbs_con_kernel_d, inlined into it: the code it compiles
 * to is one function. */
#define MBS_CON_INLINE static inline __attribute__((always_inline))

/* One cut's rows of the tangents (loop closure): the per-state part from
 * the cache, the entities' tangents along the direction, then dphi,
 * dphid, dphidd (levels up to lev) and the rows of dPhi_q. */
MBS_CON_INLINE void cut_d(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                          const MBS_K(mbs_ws) *dw, int ci, int lev, struct MBS_K(mbs_con_cache) *own, mreal *dG,
                          mreal *dphi, mreal *dPhi_q, mreal *dphid, mreal *dphidd)
{
    const mbs_cut_info *cut = &m->con.cut[ci];
    const MBS_K(mbs_con_ops) *ops = MBS_K(mbs_con_ops_of)(cut->type);
    const int nr = ops->nrows, row = cut->row, ng = nr * 18;
    const unsigned used = ops->used;
    if (nr == 0) return;
    /* the per-state part: e, ed, edd, G = G(e), G(0), Gd = G(ed) - G(0) */
    const struct MBS_K(mbs_con_cache) *cc = cache_get(m, x, w, ci, ops, own);
    const mreal (*e)[3] = cc->e, (*ed)[3] = cc->ed, (*edd)[3] = cc->edd;
    const int Gd0 = lev >= 2 ? cc->Gd0 : 1;
    /* the direction's part: the entities' tangents */
    mreal de[MBS_CON_NENT][3], ded[MBS_CON_NENT][3], dedd[MBS_CON_NENT][3];
    const mreal *dep[MBS_CON_NENT];
    for (int k = 0; k < MBS_CON_NENT; k++) {
        dep[k] = de[k];
        if (!(used & (1u << k))) { v3_zero(de[k]); continue; }
        const int body = cut->body[k & 1];
        if (k < 2) {
            const int xo = k == 0 ? cut->x_ppoint : cut->x_cpoint;
            point_tangent(w, dw, body, x + xo, dx ? dx + xo : 0, cc->rel[k], cc->wr[k], de[k], ded[k],
                          dedd[k], lev);
        } else {
            const int xo = (k & 1) ? cut->x_Xc : cut->x_Xp;
            vector_tangent(w, dw, body, x + xo, dx ? dx + xo : 0, k >= 4 ? 1 : 0, e[k], ed[k], de[k], ded[k],
                           dedd[k], lev);
        }
    }
    /* dG = G(de) - G(0). Types whose G does not depend on the entities
     * (revolute, spherical, fixed: [-I, I] blocks) give G(de) = G(0) bit
     * for bit: dG = 0 (likewise Gd, in the cache). */
    for (int k = 0; k < ng; k++) dG[k] = 0;
    ops->jac(dep, dG);
    const int dG0 = !memcmp(dG, cc->G0, sizeof(mreal) * (size_t)ng);
    if (!dG0)
        for (int k = 0; k < ng; k++) dG[k] -= cc->G0[k];
    /* the non-zero entries of the used entities' blocks of dG (those
     * of G and Gd are in the cache) */
    gentry dge[MBS_CON_NENT][3 * MBS_CON_MAXROWS];
    int ndge[MBS_CON_NENT] = { 0 };
    const int *nge = cc->nge;
    const gentry (*ge)[3 * MBS_CON_MAXROWS] = cc->ge, (*gde)[3 * MBS_CON_MAXROWS] = cc->gde;
    if (!dG0)
        for (int k = 0; k < MBS_CON_NENT; k++)
            if (used & (1u << k)) ndge[k] = block_entries(dG, nr, k, dge[k]);
    if (dphi || dphid || dphidd) {
        /* dphi = G de, dphid = G ded + dG ed, dphidd = G dedd + dG edd + 2 Gd ded */
        mreal s0[MBS_CON_MAXROWS] = { 0 }, s1[MBS_CON_MAXROWS] = { 0 }, s2[MBS_CON_MAXROWS] = { 0 };
        for (int k = 0; k < MBS_CON_NENT; k++) {
            for (int e = 0; e < nge[k]; e++) {
                const gentry *g = &ge[k][e];
                s0[g->i] += g->v * de[k][g->c];
                if (lev >= 1) s1[g->i] += g->v * ded[k][g->c];
                if (lev >= 2) s2[g->i] += g->v * dedd[k][g->c];
            }
            for (int e = 0; e < ndge[k]; e++) {
                const gentry *g = &dge[k][e];
                if (lev >= 1) s1[g->i] += g->v * ed[k][g->c];
                if (lev >= 2) s2[g->i] += g->v * edd[k][g->c];
            }
            if (!Gd0)
                for (int e = 0; e < cc->ngde[k]; e++) {
                    const gentry *g = &gde[k][e];
                    s2[g->i] += 2 * g->v * ded[k][g->c];
                }
        }
        for (int i = 0; i < nr; i++) {
            if (dphi) dphi[row + i] = s0[i];
            if (dphid) dphid[row + i] = s1[i];
            if (dphidd) dphidd[row + i] = s2[i];
        }
    }
    if (dPhi_q)
        for (int side = 0; side < 2; side++) {
            /* the entities of one body of the cut (k & 1 == side), one walk */
            jentity ent[MBS_CON_NENT / 2];
            int ne = 0;
            for (int k = side; k < MBS_CON_NENT; k += 2)
                if ((used & (1u << k)) && (nge[k] || ndge[k])) {
                    const jentity en = { k < 2, e[k], de[k], ge[k], dge[k], nge[k], ndge[k] };
                    ent[ne++] = en;
                }
            if (ne) add_jac_d_body(m, w, dw, cut->body[side], ent, ne, dPhi_q, row);
        }
}

/* One driver's row of the tangents. */
MBS_CON_INLINE void driver_d(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                             const MBS_K(mbs_ws) *dw, int di, const mreal *dq, const mreal *dqd, const mreal *dqdd,
                             mreal t, mreal *dphi, mreal *dPhi_q, mreal *dphid, mreal *dphidd)
{
    const mbs_driver_info *dr = &m->con.driver[di];
    const int row = dr->row;
    mreal df, dfd, dfdd;
    MBS_K(mbs_driver_law_d)(m, dr, x, dx, t, &df, &dfd, &dfdd);
    if (dr->type == MBS_DRIVER_COORDINATE) {
        const int k = dr->coord;
        if (dphi) dphi[row] = (dq ? dq[k] : 0) - df;
        if (dphid) dphid[row] = (dqd ? dqd[k] : 0) - dfd;
        if (dphidd) dphidd[row] = (dqdd ? dqdd[k] : 0) - dfdd;
    } else {
        mreal r1[3], r2[3], v1[3], v2[3], a1[3], a2[3], dr1[3], dr2[3], dv1[3], dv2[3], da1[3], da2[3];
        const int x1 = dr->x_point[0], x2 = dr->x_point[1];
        point_kin_d(w, dw, dr->body[0], x + x1, dx ? dx + x1 : 0, r1, v1, a1, dr1, dv1, da1);
        point_kin_d(w, dw, dr->body[1], x + x2, dx ? dx + x2 : 0, r2, v2, a2, dr2, dv2, da2);
        mreal d[3], dd[3], ddd[3], Dd[3], Ddd[3], Dddd[3];
        v3_sub(d, r2, r1);
        v3_sub(dd, v2, v1);
        v3_sub(ddd, a2, a1);
        v3_sub(Dd, dr2, dr1);
        v3_sub(Ddd, dv2, dv1);
        v3_sub(Dddd, da2, da1);
        const mreal L = MSQRT(v3_dot(d, d)), dL = v3_dot(d, Dd) / L;
        const mreal s = v3_dot(d, dd), ds = v3_dot(Dd, dd) + v3_dot(d, Ddd);
        const mreal u = v3_dot(dd, dd) + v3_dot(d, ddd);
        const mreal du = 2 * v3_dot(dd, Ddd) + v3_dot(Dd, ddd) + v3_dot(d, Dddd);
        if (dphi) dphi[row] = dL - df;
        if (dphid) dphid[row] = ds / L - s * dL / (L * L) - dfd;
        if (dphidd)
            dphidd[row] = du / L - u * dL / (L * L) - 2 * s * ds / (L * L * L) +
                          3 * s * s * dL / (L * L * L * L) - dfdd;
        if (dPhi_q) {
            mreal g1[3], g2[3], dg1[3], dg2[3];
            v3_scale(g2, d, 1 / L);
            v3_scale(g1, g2, -1);
            v3_scale(dg2, Dd, 1 / L);
            v3_axpy(dg2, -dL / (L * L), d);
            v3_scale(dg1, dg2, -1);
            add_jac_d_row(m, w, dw, dr->body[0], r1, dr1, g1, dg1, dPhi_q, row);
            add_jac_d_row(m, w, dw, dr->body[1], r2, dr2, g2, dg2, dPhi_q, row);
        }
    }
}

/* The rows of the Euler-parameter normalization. */
MBS_CON_INLINE void euler_d(const mbs_model *m, const mreal *q, const mreal *qd, const mreal *qdd, const mreal *dq,
                            const mreal *dqd, const mreal *dqdd, mreal *dphi, mreal *dPhi_q, mreal *dphid,
                            mreal *dphidd)
{
    const int nv = m->nv;
    const int r0 = m->con.nloop_rows + m->con.ndriver;
    for (int e = 0; e < m->n_euler; e++) {
        const mbs_joint_info *j = &m->joint[m->con.euler_joint[e]];
        const int off = j->qoff + j->euler, voff = j->voff + j->euler, row = r0 + e;
        mreal s0 = 0, s1 = 0, s2 = 0;
        for (int k = 0; k < 4; k++) {
            const mreal p = q[off + k], pd = qd ? qd[voff + k] : 0, pdd = qdd ? qdd[voff + k] : 0;
            const mreal dp = dq ? dq[voff + k] : 0, dpd = dqd ? dqd[voff + k] : 0, dpdd = dqdd ? dqdd[voff + k] : 0;
            s0 += 2 * p * dp;
            s1 += 2 * (dp * pd + p * dpd);
            s2 += 4 * pd * dpd + 2 * (dp * pdd + p * dpdd);
            if (dPhi_q) dPhi_q[(size_t)row * nv + voff + k] = 2 * dp;
        }
        if (dphi) dphi[row] = s0;
        if (dphid) dphid[row] = s1;
        if (dphidd) dphidd[row] = s2;
    }
}

void MBS_K(mbs_con_kernel_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                             const MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *qdd,
                             const mreal *dq, const mreal *dqd, const mreal *dqdd, mreal t, mreal *dphi,
                             mreal *dPhi_q, mreal *dphid, mreal *dphidd)
{
    const int n = total_rows(m), nv = m->nv;
    mreal dG[MBS_CON_MAXROWS * 18];
    struct MBS_K(mbs_con_cache) own;   /* a workspace without a cache */
    if (dPhi_q)
        for (size_t k = 0; k < (size_t)n * (size_t)nv; k++) dPhi_q[k] = 0;

    /* ---- loop closure ---- */
    /* levels of the entities' tangents needed: velocities for dphid and
     * dphidd, accelerations for dphidd */
    const int lev = dphidd ? 2 : dphid ? 1 : 0;
    for (int ci = 0; ci < m->con.ncut; ci++)
        cut_d(m, x, w, dx, dw, ci, lev, &own, dG, dphi, dPhi_q, dphid, dphidd);
    /* ---- drivers ---- */
    for (int di = 0; di < m->con.ndriver; di++)
        driver_d(m, x, w, dx, dw, di, dq, dqd, dqdd, t, dphi, dPhi_q, dphid, dphidd);
    /* ---- Euler-parameter normalization ---- */
    euler_d(m, q, qd, qdd, dq, dqd, dqdd, dphi, dPhi_q, dphid, dphidd);
}

/* ---------------------------------------------------------------- point components */

void MBS_K(mbs_con_point_component)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, int body, int xp,
                                    int comp, mreal val[3], mreal *row)
{
    mreal r[3], rd[3], rdd[3], rel[3], wr[3];
    point_primal(w, body, x + xp, r, rd, rdd, rel, wr);
    val[0] = r[comp];
    val[1] = rd[comp];
    val[2] = rdd[comp];
    if (!row) return;
    for (int k = 0; k < m->nv; k++) row[k] = 0;
    for (int a = body; a > 0; a = m->joint[a].parent) {
        const mbs_joint_info *j = &m->joint[a];
        mreal rel[3];
        v3_sub(rel, r, w->r + 3 * a);
        for (int k = 0; k < j->nv; k++) {
            const mreal *bc = w->b + MBS_BSTRIDE * a + 6 * k;
            mreal J[3];
            v3_cross(J, bc + 3, rel);
            v3_add(J, J, bc);
            row[j->voff + k] = J[comp];
        }
    }
}

void MBS_K(mbs_con_point_component_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                                      const MBS_K(mbs_ws) *dw, int body, int xp, int comp, mreal dval[3],
                                      mreal *drow)
{
    mreal r[3], rd[3], rdd[3], dr[3], drd[3], drdd[3];
    point_kin_d(w, dw, body, x + xp, dx ? dx + xp : 0, r, rd, rdd, dr, drd, drdd);
    dval[0] = dr[comp];
    dval[1] = drd[comp];
    dval[2] = drdd[comp];
    if (!drow) return;
    for (int k = 0; k < m->nv; k++) drow[k] = 0;
    mreal g[3] = { 0, 0, 0 };
    g[comp] = 1;
    add_jac_d_row(m, w, dw, body, r, dr, g, NULL, drow, 0);
}
