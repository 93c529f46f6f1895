/*
 * jacobians_1dof.c - inverse dynamics and its all-columns Jacobians
 * dtau/dq, dtau/dqd (and optionally the mass matrix) in one fused pass, for
 * trees of 1-DOF joints (revolute, prismatic) and fixed joints: the fast
 * path of mbs_inverse_dynamics_derivatives and of the Jacobian part of
 * mbs_forward_dynamics_derivatives (docs/formulations.md, "All-columns
 * derivative Jacobians", fused 1-DOF path).
 *
 * Same equations as src/kernels/inverse_dynamics_jacobians.c (world axes,
 * every spatial quantity at one point p0, the model's mass centre at this
 * pose), but the kinematics and the Newton-Euler pass are done here rather
 * than read from the global-axes kernels, with constants prepared once per
 * data as in aba_joint_frames.c (the joint's part of each step, by its
 * frame kind, is joints/joint_frames.h):
 *   - each body i carries the frame F_i of its child joint, whose world
 *     rotation is R_i = R_h C_i Rot(e1, q_i) (revolute) or R_h C_i, and whose
 *     origin is o_i = o_h + R_h (p_i + q_i C_i e1) (prismatic) or
 *     o_h + R_h p_i, with the constants C_i = X_c(h)^T X_p(i) and p_i
 *     (signed permutations C_i reduce R_h C_i to a reordering);
 *   - the joint column at p0 is s = [(o_i - p0) x a; a] (revolute) or
 *     [a; 0] (prismatic), a = R_i e1 the world axis;
 *   - the body inertia about its mass centre is constant in F_i; massless
 *     bodies (frames of D-H chains) carry no inertia terms at all.
 * Rigid columns only (no Euler parameters): u = s x V_h, w = s x A_h + V_h x u,
 *   dtau_r/dq_c  = g_r . [-w_c; u_c],  dtau_r/dqd_c = g_r . [-2 u_c; -s_c]
 *                 (r at or below c, g_r = [I^C s_r; s_r x* h - Id^C s_r])
 *   dtau_r/dq_c  = s_r . psi_c,        dtau_r/dqd_c = s_r . psid_c   (r above c)
 *   psi = s x* F - I^C w - Id^C u - u x* h,  psid = Id^C s - 2 I^C u + s x* h.
 *
 * How the pass is arranged for speed (docs/benchmarks.md measures it): the
 * joint's own rotation E = C Rot(e1, q) is formed before the product with
 * the parent's R, so that only one 3x3 product lies on the chain of
 * dependencies along the tree; sin and cos come from fast_sincos (the C
 * library's sincos saves and restores the floating-point environment,
 * which is slow), all of them before the tree loop
 * (independent, they pipeline); the entries are filled after the backward
 * sweep (same reason), two at a time with SSE2, or with AVX2/FMA when the
 * processor has them, and the whole pass is then compiled for AVX2/FMA too
 * (chosen once at set-up).
 *
 * Double precision only. Usable when every joint is fixed, revolute or
 * prismatic, without force elements and without user body loads (joint
 * loads are constants along any state direction); the data must have been
 * created for this model. With force elements (mbs_jac1_rigid_usable) the
 * pass leaves their loads out: for differences in which they cancel (the
 * ALI3-P linearization's d(Mv)/dz). Leaves nothing in d->ws.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#define IDL_SSE_FNMA(a, b, c) _mm_sub_pd(c, _mm_mul_pd(a, b))
#endif
/* An AVX2/FMA version of the entry loops, chosen at run time (GCC/Clang on
 * x86); -DMBS_NO_AVX2_DISPATCH leaves it out, so that a build on an AVX2
 * machine runs what a machine without AVX2 runs (docs/testing.md) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(MBS_NO_AVX2_DISPATCH)
#include <immintrin.h>
#define IDL_AVX2 1
#endif

#include "base/algebra.h"
#include "joints/joint_frames.h"
#include "kernels/data.h"
#include "model/model_impl.h"
#include "kernels/jacobians_1dof.h"

typedef struct idl_body {
    jf_joint j;                   /* the joint's kind (fixed, revolute, prismatic), F_h -> F_i constants */
    int parent, col, qoff;        /* col: velocity of the joint, -1 for fixed; qoff: its coordinate */
    int massive;                  /* mass or inertia nonzero */
    double m, c[3], J[6];         /* mass, CoM in F_i, inertia about the CoM in F_i axes (xx yy zz xy xz yz) */
} idl_body;

enum { IDL_P = 0, IDL_PD = 10, IDL_H = 19, IDL_F = 25, IDL_NSUM = 32 };   /* 31 used, even length */

typedef struct idl_ws {           /* per body, per call */
    double R[9], o[3];            /* world rotation (columns: F_i axes) and origin of F_i */
    double cs, sn;                /* cos, sin of a revolute joint's angle */
    double V[6], A[6];            /* velocity and acceleration minus gravity, at p0 */
    /* composite sums, one block (passed to the parent in one loop):
     * (m, h, K), (hd, Kd), momentum, wrench */
    double sum[IDL_NSUM];
    double dA[6], Y[6];           /* idl_update: change of A, and of the subtree's wrench */
} idl_ws;

/* per column c (= coordinate; only 1-DOF joints): contiguous records */
enum { CC_G = 0, CC_S = 12, CC_U = 18, CC_W = 24, CC_PS = 30, CC_PSD = 36, CC_SIZE = 42 };

struct mbs_jac1 {
    int usable, nv, avx2;
    int rigid;                    /* the joints qualify (force elements aside) */
    idl_body *b;
    idl_ws *w;
    int *cbody, *cpar, *cend;     /* body of column c, parent column (-1), end of its subtree's columns */
    double *col;                  /* CC_SIZE per column */
    double *jw;                   /* nv x 2 ldp: [dtau/dq | dtau/dqd] for the FD derivatives; the
                                   * entries outside the Jacobians' pattern (rows neither in the
                                   * column's subtree nor above it) are zero from creation on and
                                   * never written: the solves read them */
    int *anc_ptr, *anc_idx;       /* ancestor columns of column c: anc_idx[anc_ptr[c] .. anc_ptr[c + 1]) */
    int ldp;                      /* nv rounded up to a multiple of 8 */
    double *xw;                   /* nv x 3 ldp: the solves' rows */
    int *sub_ptr, *sub_idx;       /* columns below c in its subtree: sub_idx[sub_ptr[c] .. sub_ptr[c + 1]) */
    double *anc_val, *sub_val;    /* the factor's entries in those orders */
    double *vbuf;                 /* nv */
};

/* ------------------------------------------------------------ helpers */

/* r = Id(Pd) v for the rate Pd = (hd, Kd) of an inertia (its mass rate is 0) */
static inline void inertia_rate_mv(double *r, const double *Pd, const double *v)
{
    const double *h = Pd, *K = Pd + 3, *w = v + 3;
    r[0] = w[1] * h[2] - w[2] * h[1];
    r[1] = w[2] * h[0] - w[0] * h[2];
    r[2] = w[0] * h[1] - w[1] * h[0];
    r[3] = h[1] * v[2] - h[2] * v[1] + K[0] * w[0] + K[3] * w[1] + K[4] * w[2];
    r[4] = h[2] * v[0] - h[0] * v[2] + K[3] * w[0] + K[1] * w[1] + K[5] * w[2];
    r[5] = h[0] * v[1] - h[1] * v[0] + K[4] * w[0] + K[5] * w[1] + K[2] * w[2];
}
static inline double dot6(const double *a, const double *b)
{
    return ((a[0] * b[0] + a[2] * b[2]) + a[4] * b[4]) + ((a[1] * b[1] + a[3] * b[3]) + a[5] * b[5]);
}
static inline double dot12(const double *a, const double *b)
{
    const double e = ((a[0] * b[0] + a[2] * b[2]) + (a[4] * b[4] + a[6] * b[6])) + (a[8] * b[8] + a[10] * b[10]);
    const double o = ((a[1] * b[1] + a[3] * b[3]) + (a[5] * b[5] + a[7] * b[7])) + (a[9] * b[9] + a[11] * b[11]);
    return e + o;
}

/* sin and cos of x together, without the floating-point environment
 * save/restore of the C library's sincos (which cost more than the
 * polynomials here): reduction by k pi/2 in three parts (exact products
 * for |k| < 2^20), then the classic minimax polynomials on [-pi/4, pi/4]
 * (fdlibm's kernel coefficients), within about 1 ulp. Beyond |x| = 1e5
 * and for non-finite x: the C library. */
static inline void fast_sincos(double x, double *sn, double *cs)
{
    if (!(fabs(x) <= 1e5)) { *sn = sin(x); *cs = cos(x); return; }
    const double big = 6755399441055744.0;     /* 1.5 * 2^52: rounds to an integer */
    const double kf = (x * 6.36619772367581382433e-01 + big) - big;
    const int k = (int)kf;
    const double r = ((x - kf * 1.57079632673412561417e+00) - kf * 6.07710050630396597660e-11) -
                     kf * 2.02226624871116645580e-21;
    const double z = r * r;
    const double ps = -1.66666666666666324348e-01 +
                      z * (8.33333333332248946124e-03 +
                           z * (-1.98412698298579493134e-04 +
                                z * (2.75573137070700676789e-06 +
                                     z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))));
    const double s0 = r + r * z * ps;
    const double pc = z * (4.16666666666666019037e-02 +
                           z * (-1.38888888888741095749e-03 +
                                z * (2.48015872894767294178e-05 +
                                     z * (-2.75573143513906633035e-07 +
                                          z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    const double hz = 0.5 * z, w = 1 - hz;
    const double c0 = w + (((1 - w) - hz) + z * pc);
    /* quadrant k mod 4 without branches (the quadrants of successive joints
     * are unpredictable): sin = +-(s0 or c0), cos = +-(c0 or s0); the
     * selection by 0/1 factors is exact */
    const double sw = (double)(k & 1), ns = 1 - sw;
    const double ss = 1 - (double)(k & 2), sc = 1 - (double)((k + 1) & 2);
    *sn = ss * (ns * s0 + sw * c0);
    *cs = sc * (ns * c0 + sw * s0);
}

/* Both Jacobians' entries of column c: rows c..end-1 (g_r . z1, g_r . z2)
 * and the rows above (s_r . ps, s_r . psd), row r at Jq + r ld (Jqd + r ld);
 * fin accumulates their sum. Two
 * lanes at a time where SSE2 is available. */
static void entries_pair(const double *CC, int c, int end, const int *cpar, int ld, const double *z1,
                         const double *z2, const double *ps, const double *psd, double *Jq,
                         double *Jqd, double *fin)
{
#if defined(__SSE2__)
    __m128d Z1[6], Z2[6], acc = _mm_setzero_pd();
    for (int k = 0; k < 6; k++) { Z1[k] = _mm_loadu_pd(z1 + 2 * k); Z2[k] = _mm_loadu_pd(z2 + 2 * k); }
    for (int r = c; r < end; r++) {
        const double *g = CC + (size_t)r * CC_SIZE + CC_G;
        __m128d g0 = _mm_load_pd(g), g1 = _mm_load_pd(g + 2), g2 = _mm_load_pd(g + 4);
        __m128d a1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(g0, Z1[0]), _mm_mul_pd(g1, Z1[1])), _mm_mul_pd(g2, Z1[2]));
        __m128d a2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(g0, Z2[0]), _mm_mul_pd(g1, Z2[1])), _mm_mul_pd(g2, Z2[2]));
        g0 = _mm_load_pd(g + 6); g1 = _mm_load_pd(g + 8); g2 = _mm_load_pd(g + 10);
        a1 = _mm_add_pd(a1, _mm_add_pd(_mm_add_pd(_mm_mul_pd(g0, Z1[3]), _mm_mul_pd(g1, Z1[4])), _mm_mul_pd(g2, Z1[5])));
        a2 = _mm_add_pd(a2, _mm_add_pd(_mm_add_pd(_mm_mul_pd(g0, Z2[3]), _mm_mul_pd(g1, Z2[4])), _mm_mul_pd(g2, Z2[5])));
        const __m128d e = _mm_add_pd(_mm_unpacklo_pd(a1, a2), _mm_unpackhi_pd(a1, a2));
        _mm_store_sd(Jq + (size_t)r * ld + c, e);
        _mm_storeh_pd(Jqd + (size_t)r * ld + c, e);
        acc = _mm_add_pd(acc, e);
    }
    const __m128d P0 = _mm_loadu_pd(ps), P1 = _mm_loadu_pd(ps + 2), P2 = _mm_loadu_pd(ps + 4);
    const __m128d D0 = _mm_loadu_pd(psd), D1 = _mm_loadu_pd(psd + 2), D2 = _mm_loadu_pd(psd + 4);
    for (int r = cpar[c]; r >= 0; r = cpar[r]) {
        const double *sr = CC + (size_t)r * CC_SIZE + CC_S;
        const __m128d s0 = _mm_load_pd(sr), s1 = _mm_load_pd(sr + 2), s2 = _mm_load_pd(sr + 4);
        const __m128d a1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(s0, P0), _mm_mul_pd(s1, P1)), _mm_mul_pd(s2, P2));
        const __m128d a2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(s0, D0), _mm_mul_pd(s1, D1)), _mm_mul_pd(s2, D2));
        const __m128d e = _mm_add_pd(_mm_unpacklo_pd(a1, a2), _mm_unpackhi_pd(a1, a2));
        _mm_store_sd(Jq + (size_t)r * ld + c, e);
        _mm_storeh_pd(Jqd + (size_t)r * ld + c, e);
        acc = _mm_add_pd(acc, e);
    }
    double t[2];
    _mm_storeu_pd(t, acc);
    *fin += t[0] + t[1];
#else
    double acc = 0;
    for (int r = c; r < end; r++) {
        const double *g = CC + (size_t)r * CC_SIZE + CC_G;
        const double e1 = dot12(g, z1), e2 = dot12(g, z2);
        Jq[(size_t)r * ld + c] = e1;
        Jqd[(size_t)r * ld + c] = e2;
        acc += e1 + e2;
    }
    for (int r = cpar[c]; r >= 0; r = cpar[r]) {
        const double *sr = CC + (size_t)r * CC_SIZE + CC_S;
        const double e1 = dot6(sr, ps), e2 = dot6(sr, psd);
        Jq[(size_t)r * ld + c] = e1;
        Jqd[(size_t)r * ld + c] = e2;
        acc += e1 + e2;
    }
    *fin += acc;
#endif
}

#if defined(IDL_AVX2)
/* entries_pair with 4 lanes and fused multiply-adds */
__attribute__((target("avx2,fma")))
static void entries_pair_avx2(const double *CC, int c, int end, const int *cpar, int ld, const double *z1,
                              const double *z2, const double *ps, const double *psd, double *Jq,
                              double *Jqd, double *fin)
{
    const __m256d A0 = _mm256_loadu_pd(z1), A1 = _mm256_loadu_pd(z1 + 4), A2 = _mm256_loadu_pd(z1 + 8);
    const __m256d B0 = _mm256_loadu_pd(z2), B1 = _mm256_loadu_pd(z2 + 4), B2 = _mm256_loadu_pd(z2 + 8);
    __m128d acc = _mm_setzero_pd();
    for (int r = c; r < end; r++) {
        const double *g = CC + (size_t)r * CC_SIZE + CC_G;
        const __m256d g0 = _mm256_loadu_pd(g), g1 = _mm256_loadu_pd(g + 4), g2 = _mm256_loadu_pd(g + 8);
        const __m256d a = _mm256_fmadd_pd(g2, A2, _mm256_fmadd_pd(g1, A1, _mm256_mul_pd(g0, A0)));
        const __m256d b = _mm256_fmadd_pd(g2, B2, _mm256_fmadd_pd(g1, B1, _mm256_mul_pd(g0, B0)));
        const __m256d h = _mm256_hadd_pd(a, b);   /* a01 b01 a23 b23 */
        const __m128d e = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
        _mm_store_sd(Jq + (size_t)r * ld + c, e);
        _mm_storeh_pd(Jqd + (size_t)r * ld + c, e);
        acc = _mm_add_pd(acc, e);
    }
    const __m256d P0 = _mm256_loadu_pd(ps), D0 = _mm256_loadu_pd(psd);
    const __m128d P1 = _mm_loadu_pd(ps + 4), D1 = _mm_loadu_pd(psd + 4);
    for (int r = cpar[c]; r >= 0; r = cpar[r]) {
        const double *sr = CC + (size_t)r * CC_SIZE + CC_S;
        const __m256d s0 = _mm256_loadu_pd(sr);
        const __m128d s1 = _mm_loadu_pd(sr + 4);
        const __m256d h = _mm256_hadd_pd(_mm256_mul_pd(s0, P0), _mm256_mul_pd(s0, D0));
        const __m128d t = _mm_hadd_pd(_mm_mul_pd(s1, P1), _mm_mul_pd(s1, D1));
        const __m128d e = _mm_add_pd(_mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1)), t);
        _mm_store_sd(Jq + (size_t)r * ld + c, e);
        _mm_storeh_pd(Jqd + (size_t)r * ld + c, e);
        acc = _mm_add_pd(acc, e);
    }
    double t[2];
    _mm_storeu_pd(t, acc);
    *fin += t[0] + t[1];
}
#endif

/* ------------------------------------------------------------ set-up */

/* long-function: one straight set-up of the tables of the fused pass,
 * in the order the pass reads them. */
int mbs_jac1_create(mbs_data *d, const mbs_model *m)
{
    struct mbs_jac1 *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->idl = f;
    const int nb = m->nb, nv = m->nv;
    f->nv = nv;
    f->b = calloc((size_t)nb + 1, sizeof *f->b);
    f->w = calloc((size_t)nb + 1, sizeof *f->w);
    f->cbody = calloc((size_t)nv + 1, sizeof(int));
    f->cpar = calloc((size_t)nv + 1, sizeof(int));
    f->cend = calloc((size_t)nv + 1, sizeof(int));
    f->col = calloc((size_t)(nv + 1) * CC_SIZE, sizeof(double));
    if (!f->b || !f->w || !f->cbody || !f->cpar || !f->cend || !f->col) return -1;
    f->rigid = 1;
#if defined(IDL_AVX2)
    __builtin_cpu_init();
    f->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    const double *x = m->x;
    for (int i = 1; i <= nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        idl_body *b = &f->b[i];
        const int kind = MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities)->frame_kind;
        if (kind != MBS_FRAME_FIXED && kind != MBS_FRAME_ROT_E1 && kind != MBS_FRAME_SLIDE_E1) {
            f->rigid = 0;
            continue;
        }
        if ((kind == MBS_FRAME_FIXED) != (jt->nv == 0)) { f->rigid = 0; continue; }
        b->parent = jt->parent;
        b->col = jt->nv ? jt->voff : -1;
        b->qoff = jt->qoff;
        const mbs_joint_info *jh = jt->parent > 0 ? &m->joint[jt->parent] : 0;
        jf_joint_init(&b->j, kind, x + jt->x_Xp, x + jt->x_ppoint, jh ? x + jh->x_Xc : 0, jh ? x + jh->x_cpoint : 0);
        /* inertia in F_i: c' = X_c^T (c - P_c), J' = X_c^T J X_c */
        const double *Xc = x + jt->x_Xc, *Pc = x + jt->x_cpoint, *cb = x + m->body[i].x_com;
        const double *I6 = x + m->body[i].x_inertia;
        const double J[9] = { I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2] };
        const double dc[3] = { cb[0] - Pc[0], cb[1] - Pc[1], cb[2] - Pc[2] };
        double T[9], Jl[9];
        for (int r = 0; r < 3; r++) {
            b->c[r] = Xc[r] * dc[0] + Xc[3 + r] * dc[1] + Xc[6 + r] * dc[2];
            for (int k = 0; k < 3; k++) T[3 * r + k] = Xc[r] * J[k] + Xc[3 + r] * J[3 + k] + Xc[6 + r] * J[6 + k];
        }
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                Jl[3 * r + k] = T[3 * r] * Xc[k] + T[3 * r + 1] * Xc[3 + k] + T[3 * r + 2] * Xc[6 + k];
        b->J[0] = Jl[0]; b->J[1] = Jl[4]; b->J[2] = Jl[8];
        b->J[3] = 0.5 * (Jl[1] + Jl[3]); b->J[4] = 0.5 * (Jl[2] + Jl[6]); b->J[5] = 0.5 * (Jl[5] + Jl[7]);
        b->m = x[m->body[i].x_mass];
        b->massive = b->m != 0;
        for (int k = 0; k < 6; k++) b->massive |= b->J[k] != 0;
    }
    /* columns: body, parent column, end of the subtree's columns */
    for (int i = 1; i <= nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nv != 1) continue;
        const int c = jt->voff;
        f->cbody[c] = i;
        int pc = -1;
        for (int h = jt->parent; h > 0 && pc < 0; h = m->joint[h].parent)
            if (m->joint[h].nv > 0) pc = m->joint[h].voff + m->joint[h].nv - 1;
        f->cpar[c] = pc;
        const int se = m->body[i].subtree_end;
        f->cend[c] = se <= nb ? m->joint[se].voff : nv;
    }
    f->usable = f->rigid && m->nforce == 0;
    if (f->usable) {
        size_t na = 0;
        for (int c = 0; c < nv; c++)
            for (int a = f->cpar[c]; a >= 0; a = f->cpar[a]) na++;
        f->ldp = (nv + 7) & ~7;
        f->jw = calloc(2 * (size_t)nv * f->ldp + 1, sizeof(double));
        f->xw = calloc(3 * (size_t)nv * f->ldp + 1, sizeof(double));
        f->anc_ptr = calloc((size_t)nv + 1, sizeof(int));
        f->anc_idx = calloc(na + 1, sizeof(int));
        f->sub_ptr = calloc((size_t)nv + 1, sizeof(int));
        f->sub_idx = calloc(na + 1, sizeof(int));
        f->anc_val = calloc(na + 1, sizeof(double));
        f->sub_val = calloc(na + 1, sizeof(double));
        f->vbuf = calloc((size_t)nv + 1, sizeof(double));
        if (!f->jw || !f->xw || !f->anc_ptr || !f->anc_idx || !f->sub_ptr || !f->sub_idx || !f->anc_val ||
            !f->sub_val || !f->vbuf)
            return -1;
        int k = 0, ks = 0;
        for (int c = 0; c < nv; c++) {
            f->anc_ptr[c] = k;
            for (int a = f->cpar[c]; a >= 0; a = f->cpar[a]) f->anc_idx[k++] = a;
            f->sub_ptr[c] = ks;
            for (int r = c + 1; r < f->cend[c]; r++) f->sub_idx[ks++] = r;
        }
        f->anc_ptr[nv] = k;
        f->sub_ptr[nv] = ks;
    }
    return 0;
}

void mbs_jac1_scribble(mbs_data *d, uint64_t *s)
{
    struct mbs_jac1 *f = d->idl;
    const int nv = f->nv, ldp = f->ldp;
    const size_t z = sizeof(double);
    mbs_scribble_bytes(f->w, sizeof(idl_ws) * ((size_t)d->model->nb + 1), s);
    mbs_scribble_bytes(f->col, z * (size_t)(nv + 1) * CC_SIZE, s);
    if (!f->usable) return;
    /* jw: garbage on the pattern (and the padding), its zeros kept */
    mbs_scribble_bytes(f->jw, z * (2 * (size_t)nv * ldp + 1), s);
    for (int c = 0; c < nv; c++)
        for (int row = 0; row < nv; row++) {
            int in = row >= c && row < f->cend[c];
            for (int a = f->cpar[c]; a >= 0 && !in; a = f->cpar[a]) in = a == row;
            if (in) continue;
            f->jw[(size_t)row * 2 * ldp + c] = 0;
            f->jw[(size_t)row * 2 * ldp + ldp + c] = 0;
        }
    mbs_scribble_bytes(f->xw, z * (3 * (size_t)nv * ldp + 1), s);
    mbs_scribble_bytes(f->anc_val, z * ((size_t)f->anc_ptr[nv] + 1), s);
    mbs_scribble_bytes(f->sub_val, z * ((size_t)f->sub_ptr[nv] + 1), s);
    mbs_scribble_bytes(f->vbuf, z * ((size_t)nv + 1), s);
}

void mbs_jac1_free(mbs_data *d)
{
    if (!d->idl) return;
    free(d->idl->b);
    free(d->idl->w);
    free(d->idl->cbody);
    free(d->idl->cpar);
    free(d->idl->cend);
    free(d->idl->col);
    free(d->idl->jw);
    free(d->idl->xw);
    free(d->idl->anc_ptr);
    free(d->idl->anc_idx);
    free(d->idl->sub_ptr);
    free(d->idl->sub_idx);
    free(d->idl->anc_val);
    free(d->idl->sub_val);
    free(d->idl->vbuf);
    free(d->idl);
    d->idl = 0;
}

int mbs_jac1_set_avx2(mbs_data *d, int on)
{
    const int prev = d->idl->avx2;
#if defined(IDL_AVX2)
    d->idl->avx2 = on && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    (void)on;
#endif
    return prev;
}

int mbs_jac1_usable(const mbs_model *m, const mbs_data *d)
{
    return d->idl && d->idl->usable && d->model == m && !d->has_body_load;
}

int mbs_jac1_rigid_usable(const mbs_model *m, const mbs_data *d)
{
    return d->idl && d->idl->rigid && d->model == m && !d->has_body_load;
}

/* ------------------------------------------------------------ FD: solves */

/* y[0, w) = (alpha x[0, w) - sum_j val[j] Z_{idx[j]}[0, w)) inv, Z_k the
 * row Z + k ld (y may be x; no Z row may be y). Blocks of columns with the
 * block's sums in registers: each listed row costs one pass over the block
 * with loads only. */
static void combine(double *y, const double *x, double alpha, const double *Z, int ld, const int *idx,
                    const double *val, int cnt, double inv, int w)
{
    int c = 0;
#if defined(__SSE2__)
    for (; c + 8 <= w; c += 8) {
        const __m128d al = _mm_set1_pd(alpha);
        __m128d a0 = _mm_mul_pd(al, _mm_loadu_pd(x + c)), a1 = _mm_mul_pd(al, _mm_loadu_pd(x + c + 2));
        __m128d a2 = _mm_mul_pd(al, _mm_loadu_pd(x + c + 4)), a3 = _mm_mul_pd(al, _mm_loadu_pd(x + c + 6));
        for (int j = 0; j < cnt; j++) {
            const __m128d l = _mm_set1_pd(val[j]);
            const double *z = Z + (size_t)idx[j] * ld + c;
            a0 = _mm_sub_pd(a0, _mm_mul_pd(l, _mm_loadu_pd(z)));
            a1 = _mm_sub_pd(a1, _mm_mul_pd(l, _mm_loadu_pd(z + 2)));
            a2 = _mm_sub_pd(a2, _mm_mul_pd(l, _mm_loadu_pd(z + 4)));
            a3 = _mm_sub_pd(a3, _mm_mul_pd(l, _mm_loadu_pd(z + 6)));
        }
        const __m128d iv = _mm_set1_pd(inv);
        _mm_storeu_pd(y + c, _mm_mul_pd(a0, iv)); _mm_storeu_pd(y + c + 2, _mm_mul_pd(a1, iv));
        _mm_storeu_pd(y + c + 4, _mm_mul_pd(a2, iv)); _mm_storeu_pd(y + c + 6, _mm_mul_pd(a3, iv));
    }
#endif
    for (; c < w; c++) {
        double a = alpha * x[c];
        for (int j = 0; j < cnt; j++) a -= val[j] * Z[(size_t)idx[j] * ld + c];
        y[c] = a * inv;
    }
}

#if defined(IDL_AVX2)
__attribute__((target("avx2,fma")))
static void combine_avx2(double *y, const double *x, double alpha, const double *Z, int ld, const int *idx,
                         const double *val, int cnt, double inv, int w)
{
    const __m256d al = _mm256_set1_pd(alpha), iv = _mm256_set1_pd(inv);
    int c = 0;
    for (; c + 32 <= w; c += 32) {   /* eight chains of fused multiply-adds */
        __m256d a[8];
        for (int t = 0; t < 8; t++) a[t] = _mm256_mul_pd(al, _mm256_loadu_pd(x + c + 4 * t));
        for (int j = 0; j < cnt; j++) {
            const __m256d l = _mm256_set1_pd(val[j]);
            const double *z = Z + (size_t)idx[j] * ld + c;
            for (int t = 0; t < 8; t++) a[t] = _mm256_fnmadd_pd(l, _mm256_loadu_pd(z + 4 * t), a[t]);
        }
        for (int t = 0; t < 8; t++) _mm256_storeu_pd(y + c + 4 * t, _mm256_mul_pd(a[t], iv));
    }
    if (c + 16 <= w) {
        __m256d a[4];
        for (int t = 0; t < 4; t++) a[t] = _mm256_mul_pd(al, _mm256_loadu_pd(x + c + 4 * t));
        for (int j = 0; j < cnt; j++) {
            const __m256d l = _mm256_set1_pd(val[j]);
            const double *z = Z + (size_t)idx[j] * ld + c;
            for (int t = 0; t < 4; t++) a[t] = _mm256_fnmadd_pd(l, _mm256_loadu_pd(z + 4 * t), a[t]);
        }
        for (int t = 0; t < 4; t++) _mm256_storeu_pd(y + c + 4 * t, _mm256_mul_pd(a[t], iv));
        c += 16;
    }
    if (c + 8 <= w) {
        __m256d a[2];
        for (int t = 0; t < 2; t++) a[t] = _mm256_mul_pd(al, _mm256_loadu_pd(x + c + 4 * t));
        for (int j = 0; j < cnt; j++) {
            const __m256d l = _mm256_set1_pd(val[j]);
            const double *z = Z + (size_t)idx[j] * ld + c;
            for (int t = 0; t < 2; t++) a[t] = _mm256_fnmadd_pd(l, _mm256_loadu_pd(z + 4 * t), a[t]);
        }
        for (int t = 0; t < 2; t++) _mm256_storeu_pd(y + c + 4 * t, _mm256_mul_pd(a[t], iv));
        c += 8;
    }
    for (; c < w; c++) {   /* (the callers' widths are multiples of 8) */
        double a0 = alpha * x[c];
        for (int j = 0; j < cnt; j++) a0 -= val[j] * Z[(size_t)idx[j] * ld + c];
        y[c] = a0 * inv;
    }
}
#endif

/* x = M^-1 x with the tree-sparse factor M = L^T L (src/dynamics/fd_derivatives.c,
 * fd_factor): L^T y = x from the leaves up, then L x = y from the root
 * down, by the lists of ancestors */
void mbs_jac1_fd_factor_solve(const mbs_model *m, mbs_data *d, const double *H, double *x)
{
    const struct mbs_jac1 *f = d->idl;
    const int n = m->nv, *aptr = f->anc_ptr, *aidx = f->anc_idx;
    for (int k = n - 1; k >= 0; k--) {
        const double *Hk = H + (size_t)k * n;
        const double xk = x[k] / Hk[k];
        x[k] = xk;
        for (int p = aptr[k]; p < aptr[k + 1]; p++) x[aidx[p]] -= Hk[aidx[p]] * xk;
    }
    for (int k = 0; k < n; k++) {
        const double *Hk = H + (size_t)k * n;
        double t = x[k];
        for (int p = aptr[k]; p < aptr[k + 1]; p++) t -= Hk[aidx[p]] * x[aidx[p]];
        x[k] = t / Hk[k];
    }
}

/* With the tree-sparse factor M = L^T L (row k of L on k and its ancestor
 * coordinates; src/dynamics/fd_derivatives.c, fd_factor), row by row:
 *   Y = -L^-T J:  Y_i = (-J_i - sum_{k in (i, e_i)} L_ki Y_k) / L_ii, from the
 *                 last row up (k: the subtree of i below i, contiguous);
 *   Z = L^-T:     row i on the columns (i, e_i) only (with Z_i[i] = 1/L_ii);
 *   X = L^-1 Y:   X_i = (Y_i - sum_{a ancestor of i} L_ia X_a) / L_ii, from the
 *                 first row down, in place, for [Y_q | Y_qd | Z] at once.
 * Cost sum_i (|subtree of i| - 1) multiply-adds per column and solve (n^2/2
 * per column on a chain, 352 for the human's 43 coordinates). A row's
 * blocks are independent chains of multiply-adds, the rows mostly wait on
 * the previous ones: the three matrices side by side in one row (ldp
 * columns each, zeros beyond nv) give each row enough independent work. */
int mbs_jac1_fd_solve(const mbs_model *m, mbs_data *d, const double *L, double *Xq, double *Xqd, double *Xtau)
{
    struct mbs_jac1 *f = d->idl;
    const int n = m->nv, *end = f->cend, ldp = f->ldp, ldx = 3 * ldp;
    const int *sidx = f->sub_idx, *sptr = f->sub_ptr, *aidx = f->anc_idx, *aptr = f->anc_ptr;
    double *sval = f->sub_val, *aval = f->anc_val, *inv = f->vbuf, *X = f->xw;
    double *out[3] = { Xq, Xqd, Xtau };
    const int jac = Xq || Xqd;
    /* the columns the last solve takes: [q | qd] and/or tau */
    const int x0 = jac ? 0 : 2 * ldp, x1 = Xtau ? 3 * ldp : 2 * ldp;
    void (*comb)(double *, const double *, double, const double *, int, const int *, const double *, int,
                 double, int) = combine;
#if defined(IDL_AVX2)
    if (f->avx2) comb = combine_avx2;
#endif
    /* the factor's entries in the order the solves take them */
    for (int i = 0; i < n; i++) {
        const double *Li = L + (size_t)i * n;
        inv[i] = 1 / Li[i];
        for (int j = aptr[i]; j < aptr[i + 1]; j++) aval[j] = Li[aidx[j]];
        for (int j = sptr[i]; j < sptr[i + 1]; j++) sval[j] = L[(size_t)sidx[j] * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        const int cnt = sptr[i + 1] - sptr[i];
        double *Xi = X + (size_t)i * ldx;
        if (jac) comb(Xi, f->jw + (size_t)i * 2 * ldp, -1.0, X, ldx, sidx + sptr[i], sval + sptr[i], cnt, inv[i], 2 * ldp);
        if (Xtau) {
            /* row i of L^-T on the columns (i, e_i), from the first column
             * of a block of 8 on (zeros before and after) */
            double *Zi = Xi + 2 * ldp;
            const int c0 = (i + 1) & ~7;
            memset(Zi, 0, sizeof(double) * (size_t)ldp);
            comb(Zi + c0, Zi + c0, 1.0, X + 2 * ldp + c0, ldx, sidx + sptr[i], sval + sptr[i], cnt, inv[i],
                 (end[i] - c0 + 7) & ~7);
            Zi[i] = inv[i];
        }
    }
    double fin = 0;   /* sum of the results: not finite if any is not (or on overflow) */
#if defined(__SSE2__)
    __m128d f0 = _mm_setzero_pd(), f1 = _mm_setzero_pd();
#endif
    for (int i = 0; i < n; i++) {
        double *Xi = X + (size_t)i * ldx;
        comb(Xi + x0, Xi + x0, 1.0, X + x0, ldx, aidx + aptr[i], aval + aptr[i], aptr[i + 1] - aptr[i], inv[i],
             x1 - x0);
        /* out to the caller's rows, summing as they go */
        for (int t = 0; t < 3; t++) {
            if (!out[t]) continue;
            const double *src = Xi + t * ldp;
            double *dst = out[t] + (size_t)i * n;
            int c = 0;
#if defined(__SSE2__)
            for (; c + 4 <= n; c += 4) {
                const __m128d v0 = _mm_loadu_pd(src + c), v1 = _mm_loadu_pd(src + c + 2);
                f0 = _mm_add_pd(f0, v0);
                f1 = _mm_add_pd(f1, v1);
                _mm_storeu_pd(dst + c, v0);
                _mm_storeu_pd(dst + c + 2, v1);
            }
#endif
            for (; c < n; c++) {
                fin += src[c];
                dst[c] = src[c];
            }
        }
    }
#if defined(__SSE2__)
    double t[2];
    _mm_storeu_pd(t, _mm_add_pd(f0, f1));
    fin += t[0] + t[1];
#endif
    return isfinite(fin) ? 0 : -1;
}

/* ------------------------------------------------------------ the pass */

#if defined(__GNUC__)
#define IDL_INLINE static inline __attribute__((always_inline))
#else
#define IDL_INLINE static inline
#endif
/* The pass in three parts, each compiled twice below (default and AVX2/FMA
 * code generation):
 *   idl_front    kinematics at (q, qd, qdd) (qdd NULL: zero), body terms,
 *                the backward sweep (composite sums, tau, the column
 *                vectors g, psi, psid) and M; returns the sum of tau and M
 *                (finiteness);
 *   idl_update   for a front run at qdd = 0: the column vectors that depend
 *                on the accelerations (w, psi) moved to the given qdd;
 *   idl_entries  the entries of dtau/dq and dtau/dqd from the column
 *                vectors; returns their sum.
 * idl_front is put together from the IDL_INLINE pieces that precede it,
 * one per phase. */

/* ---- positions, and the mass centre p0 ----
 * The joint's own part first (E = C Rot(e1, q), t = p (+ q C e1)), off
 * the chain of dependencies along the tree; then R = R_h E, o = o_h + R_h t. */
IDL_INLINE void idl_positions(const mbs_model *m, const idl_body *Bd, idl_ws *W, const double *q, double *p0)
{
    const int nb = m->nb;
    double mc[3] = { 0, 0, 0 }, mt = 0;
    /* sines and cosines first: independent of each other, they pipeline
     * here, where inside the tree loop each one would wait in line */
    for (int i = 1; i <= nb; i++)
        if (Bd[i].j.kind == MBS_FRAME_ROT_E1) fast_sincos(q[Bd[i].qoff], &W[i].sn, &W[i].cs);
    for (int i = 1; i <= nb; i++) {
        const idl_body *b = &Bd[i];
        idl_ws *w = &W[i];
        const int h = b->parent;
        double E[9], t[3];
        jf_local_1dof(&b->j, w->cs, w->sn, q, b->qoff, E, t);
        double *R = w->R, *o = w->o;
        if (h > 0) {
            const double *Rh = W[h].R, *oh = W[h].o;
            for (int r = 0; r < 3; r++) {
                const double a0 = Rh[3 * r], a1 = Rh[3 * r + 1], a2 = Rh[3 * r + 2];
                R[3 * r] = a0 * E[0] + a1 * E[3] + a2 * E[6];
                R[3 * r + 1] = a0 * E[1] + a1 * E[4] + a2 * E[7];
                R[3 * r + 2] = a0 * E[2] + a1 * E[5] + a2 * E[8];
                o[r] = oh[r] + (a0 * t[0] + a1 * t[1] + a2 * t[2]);
            }
        } else {
            for (int k = 0; k < 9; k++) R[k] = E[k];
            o[0] = t[0]; o[1] = t[1]; o[2] = t[2];
        }
        if (b->m != 0) {
            const double *c = b->c, ms = b->m;
            for (int r = 0; r < 3; r++)
                mc[r] += ms * (o[r] + R[3 * r] * c[0] + R[3 * r + 1] * c[1] + R[3 * r + 2] * c[2]);
            mt += ms;
        }
    }
    p0[0] = p0[1] = p0[2] = 0;
    if (mt > 0) for (int r = 0; r < 3; r++) p0[r] = mc[r] / mt;
}

/* ---- velocity, acceleration and column of body i at p0 (r = o_i - p0) ---- */
IDL_INLINE void idl_body_motion(const idl_body *b, idl_ws *w, double *CC, const double *Vh, const double *Ah,
                                const double *r, const double *qd, const double *qdd)
{
    const double *R = w->R;
    double *V = w->V, *A = w->A;
    if (b->col < 0) {
        for (int k = 0; k < 6; k++) { V[k] = Vh[k]; A[k] = Ah[k]; }
        return;
    }
    const int c = b->col;
    double *C = CC + (size_t)c * CC_SIZE, *s = C + CC_S, *u = C + CC_U, *wk = C + CC_W;
    const double a[3] = { R[0], R[3], R[6] };
    jf_column_1dof(&b->j, a, r, s);
    s6_mcross(u, s, Vh);
    double t[6];
    s6_mcross(wk, s, Ah);
    s6_mcross(t, Vh, u);
    for (int k = 0; k < 6; k++) wk[k] += t[k];
    const double qdc = qd ? qd[c] : 0, qddc = qdd ? qdd[c] : 0;
    for (int k = 0; k < 6; k++) {
        V[k] = Vh[k] + s[k] * qdc;
        A[k] = Ah[k] + s[k] * qddc - u[k] * qdc;
    }
}

/* ---- body terms of a massive body i at p0 (r = o_i - p0): inertia,
 * momentum, its rate terms, and the body's wrench I A + V x* I V ---- */
IDL_INLINE void idl_body_terms(const idl_body *b, idl_ws *w, const double *r)
{
    const double *R = w->R, *V = w->V, *A = w->A;
    double *P = w->sum + IDL_P, *Pd = w->sum + IDL_PD, *Hm = w->sum + IDL_H, *F = w->sum + IDL_F;
    /* inertia at p0, world axes: K = R J R^T + m (|cg|^2 I - cg cg^T) */
    const double ms = b->m, *J = b->J;
    double cg[3];
    for (int k = 0; k < 3; k++) cg[k] = r[k] + R[3 * k] * b->c[0] + R[3 * k + 1] * b->c[1] + R[3 * k + 2] * b->c[2];
    double RJ[9];
    for (int k = 0; k < 3; k++) {
        const double r0 = R[3 * k], r1 = R[3 * k + 1], r2 = R[3 * k + 2];
        RJ[3 * k] = r0 * J[0] + r1 * J[3] + r2 * J[4];
        RJ[3 * k + 1] = r0 * J[3] + r1 * J[1] + r2 * J[5];
        RJ[3 * k + 2] = r0 * J[4] + r1 * J[5] + r2 * J[2];
    }
    const double cc = cg[0] * cg[0] + cg[1] * cg[1] + cg[2] * cg[2];
    P[0] = ms;
    P[1] = ms * cg[0]; P[2] = ms * cg[1]; P[3] = ms * cg[2];
#define RJRT(a, b) (RJ[3 * (a)] * R[3 * (b)] + RJ[3 * (a) + 1] * R[3 * (b) + 1] + RJ[3 * (a) + 2] * R[3 * (b) + 2])
    P[4] = RJRT(0, 0) + ms * (cc - cg[0] * cg[0]);
    P[5] = RJRT(1, 1) + ms * (cc - cg[1] * cg[1]);
    P[6] = RJRT(2, 2) + ms * (cc - cg[2] * cg[2]);
    P[7] = RJRT(0, 1) - ms * cg[0] * cg[1];
    P[8] = RJRT(0, 2) - ms * cg[0] * cg[2];
    P[9] = RJRT(1, 2) - ms * cg[1] * cg[2];
#undef RJRT
    s6_inertia_mv(Hm, P, V);
    s6_inertia_mv(F, P, A);
    s6_fcross_add(F, V, Hm);
    /* Pd = (hd, Kd): hd = linear part of I V;
     * Kd = 2 (h.v) I - v h^T - h v^T + S(w) K - K S(w) */
    const double *hh = P + 1, *v = V, *om = V + 3, *K = P + 4;
    Pd[0] = Hm[0]; Pd[1] = Hm[1]; Pd[2] = Hm[2];
    /* K full: [K0 K3 K4; K3 K1 K5; K4 K5 K2]; SK = S(w) K */
    const double k00 = K[0], k11 = K[1], k22 = K[2], k01 = K[3], k02 = K[4], k12 = K[5];
    const double SK00 = om[1] * k02 - om[2] * k01, SK11 = om[2] * k01 - om[0] * k12;
    const double SK22 = om[0] * k12 - om[1] * k02;
    const double SK01 = om[1] * k12 - om[2] * k11, SK10 = om[2] * k00 - om[0] * k02;
    const double SK02 = om[1] * k22 - om[2] * k12, SK20 = om[0] * k01 - om[1] * k00;
    const double SK12 = om[2] * k02 - om[0] * k22, SK21 = om[0] * k11 - om[1] * k01;
    const double hv = 2 * (hh[0] * v[0] + hh[1] * v[1] + hh[2] * v[2]);
    Pd[3] = hv - 2 * v[0] * hh[0] + 2 * SK00;
    Pd[4] = hv - 2 * v[1] * hh[1] + 2 * SK11;
    Pd[5] = hv - 2 * v[2] * hh[2] + 2 * SK22;
    Pd[6] = -v[0] * hh[1] - hh[0] * v[1] + SK01 + SK10;
    Pd[7] = -v[0] * hh[2] - hh[0] * v[2] + SK02 + SK20;
    Pd[8] = -v[1] * hh[2] - hh[1] * v[2] + SK12 + SK21;
}

/* ---- backward, the column c of body record w (its composite sums):
 * tau_c (tau NULL: not wanted) and the column vectors g, psi, psid ---- */
IDL_INLINE void idl_column_vectors(double *C, const idl_ws *w, int c, const double *ql, double *tau)
{
    const double *s = C + CC_S, *u = C + CC_U, *wk = C + CC_W;
    const double *P = w->sum + IDL_P, *Pd = w->sum + IDL_PD, *Hm = w->sum + IDL_H, *F = w->sum + IDL_F;
    if (tau) tau[c] = dot6(s, F) - ql[c];
    double *al = C + CC_G, *be = C + CC_G + 6, *ps = C + CC_PS, *psd = C + CC_PSD;
    double t[6], Iu[6], Iw[6];
    s6_inertia_mv(al, P, s);
    inertia_rate_mv(t, Pd, s);
    s6_inertia_mv(Iu, P, u);
    double sH[6] = { 0, 0, 0, 0, 0, 0 };
    s6_fcross_add(sH, s, Hm);
    for (int k = 0; k < 6; k++) { be[k] = sH[k] - t[k]; psd[k] = (t[k] - 2 * Iu[k]) + sH[k]; }
    /* psi = s x* F - I w - Id u - u x* h */
    s6_inertia_mv(Iw, P, wk);
    inertia_rate_mv(t, Pd, u);
    for (int k = 0; k < 6; k++) ps[k] = -Iw[k] - t[k];
    s6_fcross_add(ps, s, F);
    const double mu[6] = { -u[0], -u[1], -u[2], -u[3], -u[4], -u[5] };
    s6_fcross_add(ps, mu, Hm);
}

/* ---- mass matrix: M(r, c) = s_r . alpha_c, r above or at c; returns
 * the sum of its entries ---- */
IDL_INLINE double idl_mass_matrix(const mbs_model *m, const double *CC, const int *cpar, double *M)
{
    const int nv = m->nv;
    double fin = 0;
    if (m->nbranch != 1) memset(M, 0, sizeof(double) * (size_t)nv * nv);
    for (int c = 0; c < nv; c++) {
        const double *gc = CC + (size_t)c * CC_SIZE + CC_G;
        for (int r = c; r >= 0; r = cpar[r]) {
            const double e = dot6(CC + (size_t)r * CC_SIZE + CC_S, gc);
            M[(size_t)r * nv + c] = M[(size_t)c * nv + r] = e;
            fin += e;
        }
    }
    return fin;
}

IDL_INLINE double idl_front(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                            double *tau, double *M)
{
    const int nb = m->nb, nv = m->nv;
    struct mbs_jac1 *f = d->idl;
    const idl_body *Bd = f->b;
    idl_ws *W = f->w;
    double *CC = f->col;
    const double *g = m->x + m->x_gravity, *ql = d->qload;
    double p0[3];
    idl_positions(m, Bd, W, q, p0);

    /* ---- velocities, accelerations, columns, body terms at p0 ---- */
    const double V0[6] = { 0, 0, 0, 0, 0, 0 }, A0[6] = { -g[0], -g[1], -g[2], 0, 0, 0 };
    for (int i = 1; i <= nb; i++) {
        const idl_body *b = &Bd[i];
        idl_ws *w = &W[i];
        const int h = b->parent;
        const double r[3] = { w->o[0] - p0[0], w->o[1] - p0[1], w->o[2] - p0[2] };
        idl_body_motion(b, w, CC, h > 0 ? W[h].V : V0, h > 0 ? W[h].A : A0, r, qd, qdd);
        if (b->massive) idl_body_terms(b, w, r);
        else memset(w->sum, 0, sizeof w->sum);
    }

    /* ---- backward: composite sums, tau, column vectors ---- */
    double fin = 0;   /* sum of the outputs: not finite if any entry is not (or on overflow) */
    for (int i = nb; i >= 1; i--) {
        const idl_body *b = &Bd[i];
        idl_ws *w = &W[i];
        const int h = b->parent;
        if (b->col >= 0) idl_column_vectors(CC + (size_t)b->col * CC_SIZE, w, b->col, ql, tau);
        if (h > 0) {
            idl_ws *wh = &W[h];
            for (int k = 0; k < IDL_NSUM; k++) wh->sum[k] += w->sum[k];
        }
    }
    if (M) fin = idl_mass_matrix(m, CC, f->cpar, M);
    if (tau) for (int k = 0; k < nv; k++) fin += tau[k];
    return fin;
}

/* After idl_front at qdd = 0 (with tau = b, the bias): the accelerations
 * qdd added (or, after an earlier update, the change dqdd of them). With dA_i = sum over the path to i of s_k qdd_k (the change
 * of body i's acceleration), the column vectors change by
 *   w_c   += s_c x dA_h                          (h the parent body)
 *   psi_c += s_c x* dF_i - I^C_i (s_c x dA_h)
 * where dF_i = sum over the subtree of I_j dA_j = I^C_i dA_h + Y_i and
 * Y_i = I^C_i s_i qdd_i + sum over the children of Y_k (I^C_i s_i is the
 * column's alpha, already formed); tau (NULL: not wanted) += s . dF. The
 * composite inertias I^C are those idl_front left. */
IDL_INLINE void idl_update(const mbs_model *m, mbs_data *d, const double *qdd, double *tau)
{
    const int nb = m->nb;
    struct mbs_jac1 *f = d->idl;
    const idl_body *Bd = f->b;
    idl_ws *W = f->w;
    double *CC = f->col;
    const double z6[6] = { 0, 0, 0, 0, 0, 0 };
    for (int i = 1; i <= nb; i++) {
        const idl_body *b = &Bd[i];
        idl_ws *w = &W[i];
        const double *dAh = b->parent > 0 ? W[b->parent].dA : z6;
        if (b->col >= 0) {
            const int c = b->col;
            double *C = CC + (size_t)c * CC_SIZE, *s = C + CC_S, *wk = C + CC_W, *al = C + CC_G;
            const double a = qdd[c];
            double t[6];
            s6_mcross(t, s, dAh);
            for (int k = 0; k < 6; k++) {
                wk[k] += t[k];
                w->dA[k] = dAh[k] + s[k] * a;
                w->Y[k] = al[k] * a;
            }
        } else {
            for (int k = 0; k < 6; k++) { w->dA[k] = dAh[k]; w->Y[k] = 0; }
        }
    }
    for (int i = nb; i >= 1; i--) {
        const idl_body *b = &Bd[i];
        idl_ws *w = &W[i];
        const int h = b->parent;
        if (b->col >= 0) {
            const int c = b->col;
            double *C = CC + (size_t)c * CC_SIZE, *s = C + CC_S, *ps = C + CC_PS;
            const double *P = w->sum + IDL_P, *dAh = h > 0 ? W[h].dA : z6;
            double dF[6], t[6], It[6];
            s6_inertia_mv(dF, P, dAh);
            for (int k = 0; k < 6; k++) dF[k] += w->Y[k];
            s6_mcross(t, s, dAh);
            s6_inertia_mv(It, P, t);
            for (int k = 0; k < 6; k++) ps[k] -= It[k];
            s6_fcross_add(ps, s, dF);
            if (tau) tau[c] += dot6(s, dF);
        }
        if (h > 0)
            for (int k = 0; k < 6; k++) W[h].Y[k] += w->Y[k];
    }
}

/* The entries from the column vectors, column by column: rows at or below
 * c, then the rows above (after the sweep, so that the columns' loops do
 * not wait on the chain of composite sums). Row r of dtau/dq at
 * dtau_dq + r ld (the same for dtau/dqd); zero: clear the matrices first
 * (the entries between independent branches are not written). */
IDL_INLINE double idl_entries(const mbs_model *m, mbs_data *d, double *dtau_dq, double *dtau_dqd, int ld,
                              int zero, int avx2)
{
    const int nv = m->nv;
    struct mbs_jac1 *f = d->idl;
    const double *CC = f->col;
    const int *cpar = f->cpar, *cend = f->cend;
    double fin = 0;
    if (zero && m->nbranch != 1) {
        if (dtau_dq) memset(dtau_dq, 0, sizeof(double) * (size_t)nv * nv);
        if (dtau_dqd) memset(dtau_dqd, 0, sizeof(double) * (size_t)nv * nv);
    }
    for (int c = 0; c < nv; c++) {
        const double *C = CC + (size_t)c * CC_SIZE;
        const double *s = C + CC_S, *u = C + CC_U, *wk = C + CC_W, *ps = C + CC_PS, *psd = C + CC_PSD;
        const double z1[12] = { -wk[0], -wk[1], -wk[2], -wk[3], -wk[4], -wk[5],
                                u[0], u[1], u[2], u[3], u[4], u[5] };
        const double z2[12] = { -2 * u[0], -2 * u[1], -2 * u[2], -2 * u[3], -2 * u[4], -2 * u[5],
                                -s[0], -s[1], -s[2], -s[3], -s[4], -s[5] };
        const int end = cend[c];
        if (dtau_dq && dtau_dqd) {
#if defined(IDL_AVX2)
            if (avx2)
                entries_pair_avx2(CC, c, end, cpar, ld, z1, z2, ps, psd, dtau_dq, dtau_dqd, &fin);
            else
#endif
                entries_pair(CC, c, end, cpar, ld, z1, z2, ps, psd, dtau_dq, dtau_dqd, &fin);
        } else if (dtau_dq || dtau_dqd) {
            double *out = dtau_dq ? dtau_dq : dtau_dqd;
            const double *z = dtau_dq ? z1 : z2, *pv = dtau_dq ? ps : psd;
            for (int r = c; r < end; r++) {
                const double e1 = dot12(CC + (size_t)r * CC_SIZE + CC_G, z);
                out[(size_t)r * ld + c] = e1;
                fin += e1;
            }
            for (int r = cpar[c]; r >= 0; r = cpar[r]) {
                const double e1 = dot6(CC + (size_t)r * CC_SIZE + CC_S, pv);
                out[(size_t)r * ld + c] = e1;
                fin += e1;
            }
        }
    }
    return fin;
}

IDL_INLINE int idl_pass(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                        double *tau, double *dtau_dq, double *dtau_dqd, double *M, int avx2)
{
    double fin = idl_front(m, d, q, qd, qdd, tau, M);
    if (dtau_dq || dtau_dqd) fin += idl_entries(m, d, dtau_dq, dtau_dqd, m->nv, 1, avx2);
    return isfinite(fin) ? 0 : -1;
}

/* The forward-dynamics variant (mbs_jac1_fd_begin / mbs_jac1_fd_jacobians) */
IDL_INLINE int idl_fd_begin(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                            const double *qdd, double *b, double *M)
{
    return isfinite(idl_front(m, d, q, qd, qdd, b, M)) ? 0 : -1;
}

IDL_INLINE int idl_fd_jacobians(const mbs_model *m, mbs_data *d, int avx2)
{
    struct mbs_jac1 *f = d->idl;
    /* the workspace keeps its zeros between independent branches from
     * call to call (the same entries are written every time) */
    const double fin = idl_entries(m, d, f->jw, f->jw + f->ldp, 2 * f->ldp, 0, avx2);
    return isfinite(fin) ? 0 : -1;
}

#if defined(IDL_AVX2)
__attribute__((target("avx2,fma")))
static int idl_pass_avx2(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                         double *tau, double *dtau_dq, double *dtau_dqd, double *M)
{
    return idl_pass(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd, M, 1);
}
__attribute__((target("avx2,fma")))
static int idl_fd_begin_avx2(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *qdd, double *b, double *M)
{
    return idl_fd_begin(m, d, q, qd, qdd, b, M);
}
__attribute__((target("avx2,fma")))
static void idl_update_avx2(const mbs_model *m, mbs_data *d, const double *dqdd, double *tau)
{
    idl_update(m, d, dqdd, tau);
}
__attribute__((target("avx2,fma")))
static int idl_fd_jacobians_avx2(const mbs_model *m, mbs_data *d)
{
    return idl_fd_jacobians(m, d, 1);
}
#endif

int mbs_jac1_id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                         const double *qdd, double *tau, double *dtau_dq, double *dtau_dqd, double *M)
{
#if defined(IDL_AVX2)
    if (d->idl->avx2) return idl_pass_avx2(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd, M);
#endif
    return idl_pass(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd, M, 0);
}

int mbs_jac1_fd_begin(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                     double *tau, double *M)
{
#if defined(IDL_AVX2)
    if (d->idl->avx2) return idl_fd_begin_avx2(m, d, q, qd, qdd, tau, M);
#endif
    return idl_fd_begin(m, d, q, qd, qdd, tau, M);
}

void mbs_jac1_fd_move(const mbs_model *m, mbs_data *d, const double *dqdd, double *tau)
{
#if defined(IDL_AVX2)
    if (d->idl->avx2) { idl_update_avx2(m, d, dqdd, tau); return; }
#endif
    idl_update(m, d, dqdd, tau);
}

const double *mbs_jac1_fd_jacobians(const mbs_model *m, mbs_data *d, int *bad, int *ld)
{
    *ld = 2 * d->idl->ldp;
#if defined(IDL_AVX2)
    if (d->idl->avx2) {
        *bad = idl_fd_jacobians_avx2(m, d);
        return d->idl->jw;
    }
#endif
    *bad = idl_fd_jacobians(m, d, 0);
    return d->idl->jw;
}
