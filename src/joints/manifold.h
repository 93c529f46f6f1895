/*
 * manifold.h - the exponential maps of SO(3) and SE(3) on the coordinates
 * of spherical and floating joints (docs/tangent-space.md §4).
 *
 * Conventions. A unit quaternion p = [e0, e1, e2, e3] (scalar first) has the
 * rotation A(p) of base/algebra.h; p (x) q is the Hamilton product, so that
 * A(p (x) q) = A(p) A(q). A tangent is taken on the right (body side):
 *   SO(3):  p (+) w = p (x) exp(w),  exp(w) = [cos(th/2); sin(th/2) w / th]
 *   SE(3):  q = [t; p] (7), d = [nu; w] (6, [linear; angular]),
 *           q (+) d = (t + R V(w) nu, p (x) exp(w)),  R = A(p),
 *           V(w) = I + c1 S(w) + s1 S(w)^2
 * and q0 (-) q1 is the d with q0 (+) d = q1 (the shortest rotation,
 * |w| <= pi). With th = |w| and S(w) the skew matrix:
 *   J_r(w)    = I - c1 S + s1 S^2          (d(p (+) w) = J_r(w) dw)
 *   J_r(w)^-1 = I + S/2 + dj S^2
 *   Ad(exp w)^-1 = exp(w)^T
 * and on SE(3), in [linear; angular] blocks with R, t of exp(d):
 *   J_r(d)    = [J_r(w), Q(-nu, -w); 0, J_r(w)]
 *   J_r(d)^-1 = [J_r^-1, -J_r^-1 Q J_r^-1; 0, J_r^-1]
 *   Ad(exp d)^-1 = [R^T, -R^T S(t); 0, R^T]
 * with Barfoot's Q(rho, phi) (docs/tangent-space.md §4).
 *
 * The coefficients (cos th, sin th / th, c1 = (1 - cos th)/th^2,
 * s1 = (th - sin th)/th^3, c2, s2 of Q, dj, cos(th/2), sin(th/2)/th) are
 * entire functions of z = th^2 = w.w (dj analytic for |z| < 4 pi^2), with
 * no square root or absolute value of w: they are evaluated by their Taylor
 * series in z for Re z <= MBS_SO3_SERIES_MAX and in closed form above. Every
 * function is then holomorphic in its arguments, and the complex-step build
 * (mreal = double complex) differentiates along the manifold; the bilinear
 * p.p of a complexified exp(w) stays 1.
 *
 * Written over mreal and compiled twice (double: the library; complex:
 * symbols *_cs). The complex build also declares the double functions, so
 * that one program can compare the two builds (tests/test_manifold.c).
 */
#ifndef MBS_MANIFOLD_H
#define MBS_MANIFOLD_H

#include "base/scalar.h"

/* The coefficients of mbs_so3_coeffs, as functions of z = th^2. */
enum {
    MBS_SO3_COS = 0,   /* cos th */
    MBS_SO3_SINC,      /* sin th / th */
    MBS_SO3_C1,        /* (1 - cos th) / th^2 */
    MBS_SO3_S1,        /* (th - sin th) / th^3 */
    MBS_SO3_C2,        /* (th^2 + 2 cos th - 2) / (2 th^4) */
    MBS_SO3_S2,        /* (2 th - 3 sin th + th cos th) / (2 th^5) */
    MBS_SO3_DJ,        /* 1/th^2 - (1 + cos th) / (2 th sin th): J_r^-1 and V^-1 */
    MBS_SO3_HCOS,      /* cos(th/2) */
    MBS_SO3_HSINC,     /* sin(th/2) / th */
    MBS_SO3_NCOEF
};
/* Above this real part of z the closed forms are used, below it the series
 * (12 terms; the first one left out is below 2e-19 relative there). */
#define MBS_SO3_SERIES_MAX 1.0

#define MBS_MANIFOLD_DECLARE(T, N)                                                     \
    /* the coefficients at z: the switch, and each branch on its own */               \
    void N(mbs_so3_coeffs)(T z, T *c);                                                 \
    void N(mbs_so3_coeffs_series)(T z, T *c);                                          \
    void N(mbs_so3_coeffs_closed)(T z, T *c);                                          \
    /* quaternions: r = a (x) b (r may not alias); R = A(p / |p|) without a root */   \
    void N(mbs_quat_mul)(const T *a, const T *b, T *r);                                \
    void N(mbs_quat_rotation)(const T *p, T *R);                                       \
    /* SO(3): p (4), w (3); matrices 3x3 row-major */                                  \
    void N(mbs_so3_exp)(const T *w, T *p);                                             \
    void N(mbs_so3_exp_matrix)(const T *w, T *R);                                      \
    void N(mbs_so3_log)(const T *p, T *w);                                             \
    void N(mbs_so3_integrate)(const T *p, const T *w, T *p1);                          \
    void N(mbs_so3_difference)(const T *p0, const T *p1, T *w);                        \
    void N(mbs_so3_jr)(const T *w, T *J);                                              \
    void N(mbs_so3_jr_inv)(const T *w, T *J);                                          \
    void N(mbs_so3_ad_inv)(const T *w, T *A);                                          \
    /* r = v + 1/2 z x v + 1/12 z x (z x v): J_r(z)^-1 v to O(|z|^3) */                \
    void N(mbs_so3_dexpinv)(const T *z, const T *v, T *r);                             \
    /* SE(3): q = [t; p] (7), d = [nu; w] (6); matrices 6x6 row-major */               \
    void N(mbs_se3_integrate)(const T *q, const T *d, T *q1);                          \
    void N(mbs_se3_difference)(const T *q0, const T *q1, T *d);                        \
    void N(mbs_se3_jr)(const T *d, T *J);                                              \
    void N(mbs_se3_jr_inv)(const T *d, T *J);                                          \
    void N(mbs_se3_ad_inv)(const T *d, T *A);                                          \
    /* r = v + 1/2 z x v + 1/12 z x (z x v), x the motion cross product */             \
    void N(mbs_se3_dexpinv)(const T *z, const T *v, T *r)

MBS_MANIFOLD_DECLARE(mreal, MBS_K);
#ifdef MBS_COMPLEX
#define MBS_MANIFOLD_DOUBLE(name) name
MBS_MANIFOLD_DECLARE(double, MBS_MANIFOLD_DOUBLE);
#endif

#endif
