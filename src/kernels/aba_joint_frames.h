/*
 * aba_joint_frames.h - the per-body records of the passes in joint frames
 * (aba_joint_frames.c: forward dynamics; crba_joint_frames.c: mass matrix
 * and bias forces), created once per data by mbs_abajf_create, and the
 * per-body steps the passes share: the body's inertia in F_i, the
 * velocity and the bias force v x* (I v). What each joint does in them is
 * joints/joint_frames.h.
 */
#ifndef MBS_KERNELS_ABA_JOINT_FRAMES_H
#define MBS_KERNELS_ABA_JOINT_FRAMES_H

#include "mbsens/sparse.h"
#include "joints/joint_frames.h"

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
    double Ew[9], ow[3];         /* the mass matrix: F_i in ground axes (rotation, origin), */
    double Ic[13];               /* the composite inertia (crba_joint_frames.c) */
} fdl_ws;

struct mbs_abajf {
    int frames;                  /* every joint has a joint-frame form (all the mass matrix needs) */
    int usable;                  /* and no force elements (forward dynamics, bias forces) */
    mbs_tree_pattern tp;         /* the model's tree pattern (mbsens/sparse.h): the zeros of the dense M */
    int tree_cheaper;            /* its factorization costs < 1/8 of the dense Cholesky (mbs_crbajf_tree) */
    size_t nzrun, *zrun;         /* the runs of entries of the dense M outside the pattern: (offset, length) pairs */
    fdl_body *b;
    fdl_ws *w;
};

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

#endif
