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
 * kind (fixed, revolute, prismatic, spherical, floating), without force
 * elements and without user body loads (joint loads are fine). Everything
 * else goes through the global-axes kernels, which also leave the factors
 * and kinematics that the derivative code reads (mbs_fd_in_workspace).
 */
#include <stdlib.h>

#include "joints/joint_frames.h"
#include "kernels/data.h"
#include "model/model_impl.h"

typedef struct fdl_body {
    jf_joint j;                  /* the joint's kind and transform constants */
    int parent, qoff, voff;
    double m, mc[3], Io[9];      /* inertia at the origin of F_i, F_i axes: m, m c, J_c + m(|c|^2 I - c c^T) */
} fdl_body;

typedef struct fdl_ws {
    jf_frame f;                  /* F_h -> F_i */
    double v[6], c[6], nu[6];    /* velocity of F_i, velocity-product acceleration, joint velocity */
    jf_artic ar;                 /* articulated inertia and bias force; the downdate's U, D^-1, u */
    double a[6];
} fdl_ws;

struct mbs_abajf {
    int usable;
    fdl_body *b;
    fdl_ws *w;
};

/* ------------------------------------------------------------ set-up */

int mbs_abajf_create(mbs_data *d, const mbs_model *m)
{
    struct mbs_abajf *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->fdl = f;
    f->b = calloc((size_t)m->nb + 1, sizeof *f->b);
    f->w = calloc((size_t)m->nb + 1, sizeof *f->w);
    if (!f->b || !f->w) return -1;
    f->usable = m->nforce == 0;
    const double *x = m->x;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        fdl_body *b = &f->b[i];
        const int kind = MBS_K(mbs_joint_ops_of)(jt->type)->frame_kind;
        if (kind < 0 || kind == MBS_FRAME_CARDAN) f->usable = 0;   /* no joint-frame form */
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
    return 0;
}

void mbs_abajf_free(mbs_data *d)
{
    if (!d->fdl) return;
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

#if defined(__GNUC__)
#define FDL_INLINE static inline __attribute__((always_inline))
#else
#define FDL_INLINE static inline
#endif

/* ---- the articulated inertia of body i starts as the body's ---- */
FDL_INLINE void fdl_body_inertia(const fdl_body *b, fdl_ws *w)
{
    const double ms = b->m, mc0 = b->mc[0], mc1 = b->mc[1], mc2 = b->mc[2];
    jf_artic *ar = &w->ar;
    ar->A[0] = ms; ar->A[1] = 0; ar->A[2] = 0;
    ar->A[3] = 0; ar->A[4] = ms; ar->A[5] = 0;
    ar->A[6] = 0; ar->A[7] = 0; ar->A[8] = ms;
    ar->B[0] = 0; ar->B[1] = mc2; ar->B[2] = -mc1;       /* -S(m c) */
    ar->B[3] = -mc2; ar->B[4] = 0; ar->B[5] = mc0;
    ar->B[6] = mc1; ar->B[7] = -mc0; ar->B[8] = 0;
    for (int k = 0; k < 9; k++) ar->K[k] = b->Io[k];
}

/* ---- velocity of body i: v_i = X v_h + S nu, and c = v x S nu ---- */
FDL_INLINE void fdl_velocity(const fdl_body *b, fdl_ws *w, const fdl_ws *W, const double *qi, const double *qdi)
{
    double *v = w->v;
    const int h = b->parent;
    if (h > 0) {
        jf_motion_to_child(v, &b->j, &w->f, W[h].v);
    } else {
        for (int k = 0; k < 6; k++) v[k] = 0;
    }
    jf_velocity(&b->j, &w->f, v, w->c, w->nu, qi, qdi);
}

/* ---- bias force of body i: p = v x* (I v), I v = [m v_l - mc x w; mc x v_l + Io w] ---- */
FDL_INLINE void fdl_bias(const fdl_body *b, fdl_ws *w)
{
    const double *K = b->Io, *v = w->v, ms = b->m;
    double *pA = w->ar.pA;
    double f[3], n[3], t[3];
    jf_cross(t, b->mc, v + 3);
    f[0] = ms * v[0] - t[0]; f[1] = ms * v[1] - t[1]; f[2] = ms * v[2] - t[2];
    jf_cross(n, b->mc, v);
    n[0] += K[0] * v[3] + K[1] * v[4] + K[2] * v[5];
    n[1] += K[3] * v[3] + K[4] * v[4] + K[5] * v[5];
    n[2] += K[6] * v[3] + K[7] * v[4] + K[8] * v[5];
    jf_cross(pA, v + 3, f);
    jf_cross(pA + 3, v + 3, n);
    jf_cross(t, v, f);
    pA[3] += t[0]; pA[4] += t[1]; pA[5] += t[2];
}

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
        pass = jf_downdate_ball(&w->ar, b->qoff, b->voff, root, q, tau, ql, Ia, Ib, Ik, pa);
        c = w->c;
        break;
    case MBS_FRAME_FREE: pass = jf_downdate_free(&w->f, &w->ar, b->qoff, b->voff, root, q, tau, ql, Ia, Ib, Ik, pa); break;
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
