/*
 * aba_joint_frames.c - the fully recursive forward dynamics in
 * body-fixed joint frames (the articulated-body algorithm in Featherstone's
 * local form), the fast path of mbs_forward_dynamics(MBS_FD_RECURSIVE).
 *
 * The global-axes kernels (kinematics.c, body_terms.c,
 * aba.c) express every quantity in ground axes at a
 * reference point; that costs, per body and call, the rotation of the body
 * inertia (A J A^T), three 3x3 products for A_i, and products by the
 * non-constant joint maps b_i. Here every body i carries the frame F_i of
 * its child joint (origin at the child joint point, axes A_i X_c); in F_i
 *   - the body's spatial inertia is constant (computed once per data);
 *   - the joint map S_i is constant, and the transform from the parent
 *     frame F_h is a rotation E_i = C_i R(q) and a translation
 *     r_i = p_i + C_i t(q) with constants C_i, p_i.
 * The price is that articulated inertias are rotated when they are passed to
 * the parent. See docs/formulations.md ("Forward dynamics in joint frames").
 * This file is the three sweeps over the bodies; what each joint does in
 * them (its transform, velocity, downdate of the articulated inertia and
 * accelerations, by its frame kind) is joints/joint_frames.h.
 *
 * Double precision only, and only for models whose joints all have a frame
 * kind (fixed, revolute, prismatic, spherical, floating; the last two in
 * either velocity convention), without force
 * elements and without user body loads (joint loads are fine). Everything
 * else goes through the global-axes kernels, which also leave the factors
 * and kinematics that the derivative code reads (mbs_fd_in_workspace).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/aba_joint_frames.h"
#include "kernels/data.h"
#include "model/model_impl.h"

/* ------------------------------------------------------------ set-up */

/* The runs of the entries of the dense n x n M (row-major) outside the
 * tree pattern: row r holds its ancestors, r and its subtree [r, end).
 * Counted in a first pass, stored in the second. */
static int abajf_zero_runs(struct mbs_abajf *f, int n)
{
    const mbs_tree_pattern *p = &f->tp;
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (int r = 0; r < n; r++) {
            const size_t row = (size_t)r * (size_t)n;
            int c0 = 0;
            for (int e = p->rowptr[r]; e <= p->rowptr[r + 1] - 1; e++) {
                const int c = p->colind[e];   /* the ancestors in order, then r itself */
                if (c > c0) {
                    if (pass) { f->zrun[2 * k] = row + (size_t)c0; f->zrun[2 * k + 1] = (size_t)(c - c0); }
                    k++;
                }
                c0 = c + 1;
            }
            if (p->subtree_end[r] < n) {
                if (pass) { f->zrun[2 * k] = row + (size_t)p->subtree_end[r]; f->zrun[2 * k + 1] = (size_t)(n - p->subtree_end[r]); }
                k++;
            }
        }
        if (!pass) {
            f->nzrun = k;
            f->zrun = malloc(sizeof(size_t) * (2 * k + 1));
            if (!f->zrun) return -1;
        }
    }
    return 0;
}

int mbs_abajf_create(mbs_data *d, const mbs_model *m)
{
    struct mbs_abajf *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->fdl = f;
    f->b = calloc((size_t)m->nb + 1, sizeof *f->b);
    f->w = calloc((size_t)m->nb + 1, sizeof *f->w);
    if (!f->b || !f->w) return -1;
    f->frames = 1;
    const double *x = m->x;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        fdl_body *b = &f->b[i];
        const int kind = MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities)->frame_kind;
        if (kind < 0 || kind == MBS_FRAME_CARDAN) f->frames = 0;   /* no joint-frame form */
        b->parent = jt->parent;
        b->qoff = jt->qoff;
        b->voff = jt->voff;
        const mbs_joint_info *jh = jt->parent > 0 ? &m->joint[jt->parent] : 0;
        jf_joint_init(&b->j, kind, x + jt->x_Xp, x + jt->x_ppoint, jh ? x + jh->x_Xc : 0, jh ? x + jh->x_cpoint : 0);
        /* inertia in F_i: c' = X_c^T (c - P_c), J' = X_c^T J X_c */
        const double *Xc = x + jt->x_Xc, *Pc = x + jt->x_cpoint, *cb = x + m->body[i].x_com;
        const double *I6 = x + m->body[i].x_inertia;
        const double mass = x[m->body[i].x_mass];
        const double J[9] = { I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2] };
        double dc[3] = { cb[0] - Pc[0], cb[1] - Pc[1], cb[2] - Pc[2] }, c[3], T[9];
        jf_mt_v(c, Xc, dc);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                T[3 * r + k] = Xc[r] * J[k] + Xc[3 + r] * J[3 + k] + Xc[6 + r] * J[6 + k];   /* X_c^T J */
        const double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                b->Io[3 * r + k] = T[3 * r] * Xc[k] + T[3 * r + 1] * Xc[3 + k] + T[3 * r + 2] * Xc[6 + k] +
                                   mass * ((r == k ? cc : 0) - c[r] * c[k]);
        /* exactly symmetric */
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < r; k++) b->Io[3 * r + k] = b->Io[3 * k + r];
        b->m = mass;
        for (int k = 0; k < 3; k++) b->mc[k] = mass * c[k];
    }
    f->usable = f->frames && m->nforce == 0;
    mbs_error err;
    if (mbs_model_tree_pattern(m, &f->tp, &err) != MBS_OK) return -1;
    double tree = 0;
    for (int k = 0; k < m->nv; k++) {
        const double a = f->tp.rowptr[k + 1] - f->tp.rowptr[k] - 1;
        tree += 0.5 * a * a;
    }
    f->tree_cheaper = 8 * tree < (double)m->nv * m->nv * m->nv / 6;
    return abajf_zero_runs(f, m->nv);
}

void mbs_abajf_free(mbs_data *d)
{
    if (!d->fdl) return;
    mbs_tree_pattern_free(&d->fdl->tp);
    free(d->fdl->zrun);
    free(d->fdl->b);
    free(d->fdl->w);
    free(d->fdl);
    d->fdl = 0;
}

void mbs_abajf_scribble(mbs_data *d, uint64_t *s)
{
    mbs_scribble_bytes(d->fdl->w, sizeof(fdl_ws) * ((size_t)d->model->nb + 1), s);
}

int mbs_abajf_usable(const mbs_data *d) { return d->fdl && d->fdl->usable && !d->has_body_load; }

/* ------------------------------------------------------------ the algorithm */

/* ---- articulated inertia of body i, downdated by its joint, and its bias
 * force, added to the parent's; -1 if D is not positive definite ---- */
FDL_INLINE int fdl_to_parent(const fdl_body *b, fdl_ws *w, fdl_ws *W, const double *q, const double *tau,
                             const double *ql)
{
    double Ia[9], Ib[9], Ik[9], pa[6];
    const double *PA = Ia, *PB = Ib, *PK = Ik, *c = 0;
    const int root = b->parent == 0;
    int pass;
    switch (b->j.kind) {
    case MBS_FRAME_ROT_E1:
    case MBS_FRAME_SLIDE_E1:   /* Ia c is in pa */
        pass = jf_downdate_1dof(&b->j, &w->ar, w->c, b->voff, root, tau, ql, Ia, Ib, Ik, pa);
        break;
    case MBS_FRAME_BALL:
        pass = jf_downdate_ball(&w->ar, b->j.tangent, b->qoff, b->voff, root, q, tau, ql,
                                Ia, Ib, Ik, pa);
        c = w->c;
        break;
    case MBS_FRAME_FREE:
        pass = jf_downdate_free(&w->f, &w->ar, b->j.tangent, b->qoff, b->voff, root, q, tau,
                                ql, Ia, Ib, Ik, pa);
        break;
    default:
        /* a fixed joint: c = 0, the whole inertia passes */
        pass = b->parent > 0;
        for (int k = 0; k < 6 && pass; k++) pa[k] = w->ar.pA[k];
        PA = w->ar.A; PB = w->ar.B; PK = w->ar.K;
        break;
    }
    if (pass <= 0) return pass;
    if (c) {
        /* pa += Ia c (Ia = [PA PB; PB^T PK]) */
        for (int s = 0; s < 3; s++) {
            pa[s] += PA[3 * s] * c[0] + PA[3 * s + 1] * c[1] + PA[3 * s + 2] * c[2] +
                     PB[3 * s] * c[3] + PB[3 * s + 1] * c[4] + PB[3 * s + 2] * c[5];
            pa[3 + s] += PB[s] * c[0] + PB[3 + s] * c[1] + PB[6 + s] * c[2] +
                         PK[3 * s] * c[3] + PK[3 * s + 1] * c[4] + PK[3 * s + 2] * c[5];
        }
    }
    jf_artic *ah = &W[b->parent].ar;
    jf_inertia_to_parent_of(ah->A, ah->B, ah->K, &b->j, &w->f, PA, PB, PK);
    jf_force_to_parent(ah->pA, &b->j, &w->f, pa);
    return 1;
}

/* ---- accelerations of body i (ah: the parent's, or gravity as a base
 * acceleration): a = X ah + c + S nud, and qdd of its joint ---- */
FDL_INLINE void fdl_accelerations(const fdl_body *b, fdl_ws *w, const double *ah, const double *q,
                                  const double *qd, double *qdd)
{
    double *a = w->a;
    jf_motion_to_child(a, &b->j, &w->f, ah);
    for (int k = 0; k < 6; k++) a[k] += w->c[k];
    jf_acceleration(&b->j, &w->f, &w->ar, w->nu, a, b->qoff, b->voff, q, qd, qdd);
}

int mbs_abajf_forward_dynamics(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *tau, double *qdd)
{
    const int nb = m->nb;
    const fdl_body *B = d->fdl->b;
    fdl_ws *W = d->fdl->w;
    const double *ql = d->qload;

    /* ---- base to tip: transforms, velocities, body inertias and bias forces ---- */
    for (int i = 1; i <= nb; i++) {
        const fdl_body *b = &B[i];
        fdl_ws *w = &W[i];
        jf_transform(&b->j, &w->f, q + b->qoff);
        fdl_body_inertia(b, w);
        if (!qd) {
            for (int k = 0; k < 6; k++) w->v[k] = w->c[k] = w->nu[k] = w->ar.pA[k] = 0;
            continue;
        }
        fdl_velocity(b, w, W, q + b->qoff, qd + b->voff);
        fdl_bias(b, w);
    }

    /* ---- tip to base: articulated inertias and bias forces ---- */
    for (int i = nb; i >= 1; i--)
        if (fdl_to_parent(&B[i], &W[i], W, q, tau, ql) < 0) return -i;

    /* ---- base to tip: accelerations ---- */
    const double *g = m->x + m->x_gravity;
    const double a0[6] = { -g[0], -g[1], -g[2], 0, 0, 0 };   /* gravity as a base acceleration */
    for (int i = 1; i <= nb; i++)
        fdl_accelerations(&B[i], &W[i], B[i].parent > 0 ? W[B[i].parent].a : a0, q, qd, qdd);
    return 0;
}
