/*
 * crba_joint_frames.c - the mass matrix by composite inertias and the bias
 * forces h = ID(q, qd, 0) by Newton-Euler, both in body-fixed joint frames
 * (the frames, constants and per-joint steps of aba_joint_frames.c): the
 * fast path of mbs_mass_matrix, mbs_mass_matrix_sparse and the public
 * semi-recursive forward dynamics.
 *
 * In F_i a body's inertia (m, mc, Io of aba_joint_frames.h) and its
 * joint's motion subspace S_i are constant. The mass matrix places F_i in
 * ground axes (a reordering of the parent's columns and one rotation for
 * permutation joints), takes each body's inertia and each joint's motion
 * columns there, about a reference point on its ground subtree
 * (crba_pose), sums the composite inertias tip to base (10 numbers each) and forms one entry of the tree pattern by
 * one 6-vector product:
 *   M(c, a) = S_a^T (Ic_i S_c),  a = c or an ancestor of c (c in joint i).
 * A floating joint from the ground that carries a single body (the free
 * bodies of a large tree) skips all of that: its 7 x 7 block is a closed
 * form in the body's constants and p (crba_free_leaf_block), its 6 x 6
 * block with tangent velocities the body's constant inertia in F_i.
 * The bias forces run Newton-Euler in the joint frames (velocities and
 * accelerations base to tip, forces tip to base, by the joint's
 * transforms), as the joint-frame FD's first sweep.
 *
 * Euler-parameter coordinates (spherical: p; floating: t, p) are not the
 * joint velocities nu of F_i but map to them linearly:
 *   nu = J qd,  J = 2 G(p) (spherical),  J = diag(R^T, 2 G(p)) (floating),
 * G(p) as in joints/joint_frames.h. The coordinate mass matrix is then the
 * congruence M_q = J^T M_nu J (the motion columns are those of S J), and the
 * bias forces are h_q = J^T (h_nu + M_nu Jd qd): the Newton-Euler pass runs
 * with the joint accelerations Jd qd, which vanish for the rotation
 * (G(pd) pd = 0) and are R^T-derivative terms nu_l x w' for the
 * translation. Both are the global kernels' results for |p| = 1.
 * Tangent velocities (BALL_TANGENT, FREE_TANGENT) are the joint velocities
 * nu themselves: J = I, no congruence and no joint accelerations.
 *
 * Double precision only; M needs every joint to have a frame kind
 * (mbs_abajf.frames), h in addition no force elements and no user body
 * loads (mbs_abajf_usable). Leaves nothing in d->ws.
 */
#include <string.h>

#include "kernels/aba_joint_frames.h"
#include "kernels/data.h"
#include "model/model_impl.h"

int mbs_crbajf_usable(const mbs_data *d) { return d->fdl && d->fdl->frames; }

int mbs_crbajf_is_tree_pattern(const mbs_data *d, const mbs_tree_pattern *p)
{
    const mbs_tree_pattern *t = &d->fdl->tp;
    return p && p->n == t->n && p->parent && p->rowptr &&
           (t->n == 0 || memcmp(p->parent, t->parent, sizeof(int) * (size_t)t->n) == 0);
}

const mbs_tree_pattern *mbs_crbajf_tree(const mbs_data *d) { return d->fdl->tree_cheaper ? &d->fdl->tp : 0; }

/* g = (S J)^T f: a force f in F_i read at the joint's coordinates */
static inline void crba_read(const fdl_body *b, const fdl_ws *w, const double *qi, const double *f, double *g)
{
    switch (b->j.kind) {
    case MBS_FRAME_ROT_E1: g[0] = f[3]; break;
    case MBS_FRAME_SLIDE_E1: g[0] = f[0]; break;
    case MBS_FRAME_BALL:
        if (b->j.tangent) { g[0] = f[3]; g[1] = f[4]; g[2] = f[5]; }
        else jf_ep_Gt(g, qi, f + 3, 2);
        break;
    case MBS_FRAME_FREE:
        if (b->j.tangent) {
            for (int k = 0; k < 6; k++) g[k] = f[k];
            break;
        }
        jf_m_v(g, w->f.R, f);
        jf_ep_Gt(g + 3, qi + 3, f + 3, 2);
        break;
    default: break;
    }
}

/* Pose of F_i in ground axes (Ew, ow) from its parent's (identity for the
 * ground) and the joint's transform; ow is taken from the origin of the
 * frame of the ground subtree's root body (its own ow = 0): M couples only
 * bodies of one ground subtree, and a reference point on the subtree keeps
 * the lever arms, and the round-off of the composite inertias, at the
 * model's size wherever it is placed. Permutation joints:
 * P = Ew_h C by columns (column pi_k of P = sg_k column k of Ew_h), then
 * Ew = P Rot(e1, q) or P, ow = ow_h + P rG. */
static inline void crba_pose(const fdl_body *b, fdl_ws *w, const fdl_ws *W)
{
    static const double I3[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, O3[3] = { 0, 0, 0 };
    const jf_frame *f = &w->f;
    const double *Eh = b->parent > 0 ? W[b->parent].Ew : I3, *oh = b->parent > 0 ? W[b->parent].ow : O3;
    if (b->j.perm) {
        double P[9];
        for (int k = 0; k < 3; k++) {
            const int c = b->j.pi[k];
            const double sg = b->j.sg[k];
            P[c] = sg * Eh[k]; P[3 + c] = sg * Eh[3 + k]; P[6 + c] = sg * Eh[6 + k];
        }
        if (b->j.kind == MBS_FRAME_ROT_E1) jf_rot_e1(w->Ew, P, f->cs, f->sn);
        else for (int k = 0; k < 9; k++) w->Ew[k] = P[k];
        jf_m_v(w->ow, P, f->rG);
    } else {
        jf_mul(w->Ew, Eh, f->E);
        jf_m_v(w->ow, Eh, f->r);
    }
    for (int k = 0; k < 3; k++) w->ow[k] = b->parent > 0 ? w->ow[k] + oh[k] : 0;
}

/* A vector pair of F_i ([linear; angular]) in ground axes at the
 * reference point: motion (force = 0) [E l + o x E a; E a], force [E l; E a + o x E l] */
static inline void crba_to_ground(const fdl_ws *w, const double *x, int force, double *y)
{
    double t[3];
    jf_m_v(y, w->Ew, x);
    jf_m_v(y + 3, w->Ew, x + 3);
    if (force) {
        jf_cross(t, w->ow, y);
        for (int k = 0; k < 3; k++) y[3 + k] += t[k];
    } else {
        jf_cross(t, w->ow, y + 3);
        for (int k = 0; k < 3; k++) y[k] += t[k];
    }
}

/* The motion columns S J of joint i in ground axes at the subtree's reference point
 * (6 per velocity, at Sw + 6 voff) */
static void crba_motion_columns(const fdl_body *b, const fdl_ws *w, const double *qi, double *Sw)
{
    double s[6] = { 0, 0, 0, 0, 0, 0 };
    switch (b->j.kind) {
    case MBS_FRAME_ROT_E1: {
        /* [o x a; a], a = E e1 */
        const double a[3] = { w->Ew[0], w->Ew[3], w->Ew[6] };
        jf_cross(Sw, w->ow, a);
        Sw[3] = a[0]; Sw[4] = a[1]; Sw[5] = a[2];
        break;
    }
    case MBS_FRAME_SLIDE_E1:
        Sw[0] = w->Ew[0]; Sw[1] = w->Ew[3]; Sw[2] = w->Ew[6];
        Sw[3] = Sw[4] = Sw[5] = 0;
        break;
    case MBS_FRAME_FREE:
        if (b->j.tangent) {   /* the unit columns of F_i */
            for (int k = 0; k < 6; k++) {
                const double e[6] = { k == 0, k == 1, k == 2, k == 3, k == 4, k == 5 };
                crba_to_ground(w, e, 0, Sw + 6 * k);
            }
            break;
        }
        for (int k = 0; k < 3; k++) {
            const double l[6] = { w->f.R[3 * k], w->f.R[3 * k + 1], w->f.R[3 * k + 2], 0, 0, 0 };
            crba_to_ground(w, l, 0, Sw + 6 * k);
        }
        Sw += 18;
        qi += 3;
        /* FALLTHROUGH */
    case MBS_FRAME_BALL:
        if (b->j.tangent) {
            for (int k = 0; k < 3; k++) {
                const double e[6] = { 0, 0, 0, k == 0, k == 1, k == 2 };
                crba_to_ground(w, e, 0, Sw + 6 * k);
            }
            break;
        }
        for (int k = 0; k < 4; k++) {
            const double e[4] = { k == 0, k == 1, k == 2, k == 3 };
            jf_ep_G(s + 3, qi, e, 2);
            crba_to_ground(w, s, 0, Sw + 6 * k);
        }
        break;
    default: break;
    }
}

/* The inertia of body i in ground axes about the reference point of
 * crba_pose, as its mass, first moment h and rotational inertia I (row-major, full), from
 * its constants in F_i (m, mc, Io about the origin of F_i): h = m o + E mc,
 * I = E Io E^T + 2 (o.u) 1 - u o^T - o u^T with u = E mc + m o / 2 (the
 * shift of the reference point from o). */
static inline void crba_body_inertia(const fdl_body *b, const fdl_ws *w, double *c)
{
    const double *E = w->Ew, *o = w->ow, *Io = b->Io, ms = b->m;
    double y[3], u[3], T[9];
    jf_m_v(y, E, b->mc);
    for (int k = 0; k < 3; k++) {
        u[k] = y[k] + 0.5 * ms * o[k];
        c[1 + k] = y[k] + ms * o[k];
    }
    c[0] = ms;
    jf_mul(T, E, Io);
    const double ou = 2 * (o[0] * u[0] + o[1] * u[1] + o[2] * u[2]);
    double *I = c + 4;
    for (int r = 0; r < 3; r++)
        for (int k = r; k < 3; k++)
            I[3 * r + k] = I[3 * k + r] = T[3 * r] * E[3 * k] + T[3 * r + 1] * E[3 * k + 1] + T[3 * r + 2] * E[3 * k + 2] +
                                          (r == k ? ou : 0) - u[r] * o[k] - o[r] * u[k];
}

/* F = Ic s for a motion column s = [l; a] at the reference point:
 * [m l + a x h; h x l + I a] */
static inline void crba_momentum(const double *c, const double *s, double *F)
{
    const double *h = c + 1, *I = c + 4;
    double t[3];
    jf_cross(t, s + 3, h);
    for (int k = 0; k < 3; k++) F[k] = c[0] * s[k] + t[k];
    jf_cross(t, h, s);
    for (int k = 0; k < 3; k++) F[3 + k] = t[k] + I[3 * k] * s[3] + I[3 * k + 1] * s[4] + I[3 * k + 2] * s[5];
}

/* A floating joint from the ground whose body has no children, in Euler
 * rates: its velocities are a ground subtree of their own, and their block
 * is the congruence J^T I J of the body's constant inertia in F_i
 * (nu = J qd, J = diag(R^T, 2G); I = [m 1, -S(mc); S(mc), Io]) in closed
 * form, with the columns g_j = G e_j of G(p) (joints/joint_frames.h):
 *   M(t_k, t_l) = m (R R^T)_kl = m delta_kl   (|p| = 1),
 *   M(e_j, t_k) = -2 (R (mc x g_j))_k,
 *   M(e_j, e_l) = 4 g_j . Io g_l,
 * into B, the packed lower triangle (row r at r (r + 1) / 2: the tree
 * storage of the block). m delta_kl is also the global pass's entry at any
 * p (its translations are the parent's axes); like the rest of this file
 * the other entries are the global ones for |p| = 1 only, which is what the
 * callers' state check admits (||p| - 1| <= 1e-6: they then differ by a few
 * ||p|^2 - 1|, tests/test_crba_joint_frames.c). */
static inline void crba_free_leaf_block(const fdl_body *b, const double *qi, double *B)
{
    const double *e = qi + 3, ms = b->m;
    double g[4][3], R[9];
    for (int j = 0; j < 4; j++) {
        const double u[4] = { j == 0, j == 1, j == 2, j == 3 };
        jf_ep_G(g[j], e, u, 1);
    }
    jf_ep_rot(R, e);
    B[0] = ms;
    B[1] = 0; B[2] = ms;
    B[3] = 0; B[4] = 0; B[5] = ms;
    for (int j = 0; j < 4; j++) {
        double *row = B + (3 + j) * (4 + j) / 2, v[3], t[3], u[3];
        jf_cross(v, b->mc, g[j]);
        jf_m_v(t, R, v);
        row[0] = -2 * t[0]; row[1] = -2 * t[1]; row[2] = -2 * t[2];
        jf_m_v(u, b->Io, g[j]);
        for (int l = 0; l <= j; l++) row[3 + l] = 4 * (g[l][0] * u[0] + g[l][1] * u[1] + g[l][2] * u[2]);
    }
}

/* The same with tangent velocities: the block is the body's inertia in F_i
 * itself, [m 1, -S(mc); S(mc), Io] (6 x 6, packed as above), at every q. */
static inline void crba_free_leaf_block_tangent(const fdl_body *b, double *B)
{
    const double ms = b->m, *c = b->mc, *Io = b->Io;
    B[0] = ms;
    B[1] = 0; B[2] = ms;
    B[3] = 0; B[4] = 0; B[5] = ms;
    B[6] = 0;     B[7] = -c[2]; B[8] = c[1];  B[9] = Io[0];
    B[10] = c[2]; B[11] = 0;    B[12] = -c[0]; B[13] = Io[3]; B[14] = Io[4];
    B[15] = -c[1]; B[16] = c[0]; B[17] = 0;    B[18] = Io[6]; B[19] = Io[7]; B[20] = Io[8];
}

/* Body i is such a floating joint: kind, parent, no children; its block has
 * n = 7 (Euler rates) or 6 (tangent) rows, 0 if it is not one */
static inline int crba_free_leaf(const mbs_model *m, const fdl_body *b, int i)
{
    if (b->parent != 0 || m->body[i].nchildren != 0) return 0;
    return b->j.kind != MBS_FRAME_FREE ? 0 : b->j.tangent ? 6 : 7;
}

/* The packed lower triangle B of the n x n diagonal block at o into the
 * dense M (both triangles) */
static void crba_block_to_dense(const double *B, int n, int o, int nv, double *M)
{
    for (int r = 0; r < n; r++)
        for (int c = 0; c <= r; c++) {
            M[(size_t)(o + r) * nv + o + c] = B[r * (r + 1) / 2 + c];
            M[(size_t)(o + c) * nv + o + r] = B[r * (r + 1) / 2 + c];
        }
}

/* Mass matrix at q: dense row-major nv x nv (tree 0: both triangles) or
 * the lower triangle in the tree storage of the model's pattern (tree 1;
 * mbsens/sparse.h); the two outputs hold the same numbers. The composite
 * inertias (13 numbers per body: m, h, I) are sums in ground axes about
 * the reference point of crba_pose; row c of the lower triangle is
 * M(c, a) = Sw_a . (Ic Sw_c) for a = c and each ancestor a of c.
 * Returns the sum of the entries of the lower triangle: finite when every
 * entry is (the callers' result check; an overflow of the sum only sends
 * them to the full check). */
double mbs_crbajf_mass_matrix(const mbs_model *m, mbs_data *d, const double *q, int tree, double *M)
{
    const int nb = m->nb, nv = m->nv;
    const fdl_body *Bd = d->fdl->b;
    fdl_ws *W = d->fdl->w;
    const mbs_tree_pattern *p = &d->fdl->tp;
    double *Sw = d->dbuf, sum = 0;
    if (!tree)   /* the entries outside the pattern; those inside are all written below */
        for (size_t k = 0; k < d->fdl->nzrun; k++) memset(M + d->fdl->zrun[2 * k], 0, sizeof(double) * d->fdl->zrun[2 * k + 1]);
    for (int i = 1; i <= nb; i++) {
        const fdl_body *b = &Bd[i];
        const int nf = crba_free_leaf(m, b, i);
        if (nf) {   /* its block alone, no composites */
            double B[28], *T = tree ? M + p->rowptr[b->voff] : B;
            if (nf == 7) crba_free_leaf_block(b, q + b->qoff, T);
            else crba_free_leaf_block_tangent(b, T);
            for (int k = 0; k < nf * (nf + 1) / 2; k++) sum += T[k];
            if (!tree) crba_block_to_dense(B, nf, b->voff, nv, M);
            continue;
        }
        jf_transform(&b->j, &W[i].f, q + b->qoff);
        crba_pose(b, &W[i], W);
        crba_motion_columns(b, &W[i], q + b->qoff, Sw + 6 * b->voff);
        crba_body_inertia(b, &W[i], W[i].Ic);
    }
    for (int i = nb; i >= 1; i--) {
        const double *Ic = W[i].Ic;
        if (crba_free_leaf(m, &Bd[i], i)) continue;
        if (Bd[i].parent > 0) {
            double *Ih = W[Bd[i].parent].Ic;
            for (int k = 0; k < 13; k++) Ih[k] += Ic[k];
        }
        for (int c = Bd[i].voff; c < Bd[i].voff + m->joint[i].nv; c++) {
            double F[6];
            crba_momentum(Ic, Sw + 6 * c, F);
            for (int e = p->rowptr[c]; e < p->rowptr[c + 1]; e++) {
                const int a = p->colind[e];
                const double *s = Sw + 6 * a;
                const double v = s[0] * F[0] + s[1] * F[1] + s[2] * F[2] + s[3] * F[3] + s[4] * F[4] + s[5] * F[5];
                sum += v;
                if (tree) {
                    M[e] = v;
                } else {
                    M[(size_t)c * nv + a] = v;
                    M[(size_t)a * nv + c] = v;
                }
            }
        }
    }
    return sum;
}

/* Force of body i at acceleration a: f = I a + v x* (I v) (the latter
 * already in ar.pA), I a = [m a_l - mc x a_w; mc x a_l + Io a_w] */
static inline void rnea_body_force(const fdl_body *b, fdl_ws *w)
{
    const double *a = w->a, *K = b->Io;
    double *f = w->ar.pA, t[3];
    jf_cross(t, b->mc, a + 3);
    for (int k = 0; k < 3; k++) f[k] += b->m * a[k] - t[k];
    jf_cross(t, b->mc, a);
    for (int k = 0; k < 3; k++) f[3 + k] += t[k] + K[3 * k] * a[3] + K[3 * k + 1] * a[4] + K[3 * k + 2] * a[5];
}

/* Bias forces h = ID(q, qd, 0) (the joint loads of d subtracted, as the
 * global Newton-Euler pass does); for mbs_abajf_usable(d) only. */
void mbs_crbajf_bias_forces(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double *h)
{
    const int nb = m->nb;
    const fdl_body *Bd = d->fdl->b;
    fdl_ws *W = d->fdl->w;
    const double *g = m->x + m->x_gravity;
    const double a0[6] = { -g[0], -g[1], -g[2], 0, 0, 0 };   /* gravity as a base acceleration */
    for (int i = 1; i <= nb; i++) {
        const fdl_body *b = &Bd[i];
        fdl_ws *w = &W[i];
        jf_transform(&b->j, &w->f, q + b->qoff);
        fdl_velocity(b, w, W, q + b->qoff, qd + b->voff);
        fdl_bias(b, w);
        jf_motion_to_child(w->a, &b->j, &w->f, b->parent > 0 ? W[b->parent].a : a0);
        for (int k = 0; k < 6; k++) w->a[k] += w->c[k];
        if (b->j.kind == MBS_FRAME_FREE && !b->j.tangent) {
            double t[3];                                 /* d(R^T) td = nu_l x w' */
            jf_cross(t, w->nu, w->nu + 3);
            for (int k = 0; k < 3; k++) w->a[k] += t[k];
        }
        rnea_body_force(b, w);
    }
    for (int i = nb; i >= 1; i--) {
        const fdl_body *b = &Bd[i];
        const int o = b->voff, n = m->joint[i].nv;
        crba_read(b, &W[i], q + b->qoff, W[i].ar.pA, h + o);
        for (int k = 0; k < n; k++) h[o + k] -= d->qload[o + k];
        if (b->parent > 0) jf_force_to_parent(W[b->parent].ar.pA, &b->j, &W[i].f, W[i].ar.pA);
    }
}
