/*
 * functions.h - time functions, evaluated by the kernels (internal).
 *
 * Written over `mreal` and compiled twice like every kernel (scalar.h).
 * A function's numbers live in the model vector x (mbs_func_info.x, .nx),
 * so f is differentiable with respect to them; t may be complex too (the
 * interval of a spline or the phase of a step is chosen from its real
 * part only).
 *
 *   constant  x = [v]                     f = v
 *   step      x = [t0, v0, t1, v1]        f = v0 for t <= t0, v1 for t >= t1,
 *                                          v0 + (v1 - v0) p(xi) between,
 *                                          xi = (t - t0)/(t1 - t0),
 *                                          cubic   p = xi^2 (3 - 2 xi)        (C1)
 *                                          quintic p = xi^3 (10 - 15 xi + 6 xi^2) (C2)
 *   sine      x = [A, fr, phi, c]         f = c + A sin(2 pi fr t + phi)
 *   spline    x = [y_0 .. y_{n-1}]        cubic spline through (t_k, y_k), natural
 *                                          (f'' = 0 at the ends) or clamped (f' = 0
 *                                          at the ends); outside [t_0, t_{n-1}]
 *                                          continued along its end tangent.
 *
 * Spline: with M_k = f''(t_k), the continuity conditions are a tridiagonal
 * system T M = R y whose matrices depend on the knot times only. Its LU
 * factors and R are precomputed at load (mbs_spline_setup, force_model.c),
 * so f is an exactly linear function of the knot values y:
 *   f(t) = sum_k W_k(t) y_k,   W_k = mbs_func_dx(...)[k].
 * A spline of the model's own values (x = m->x) is evaluated in O(log n)
 * from its second derivatives f''(t_k), computed once when the values are
 * set (mbs_forces_prepare in force_model.c: the model stays immutable, a
 * parameter change makes a new model with its own); any other values
 * (tangent directions, complex copies) by a sweep over the knots that can
 * change the result (O(n) for dense values, about 20 knots past the
 * nonzeros of a sparse direction), without storage (functions.c).
 */
#ifdef MBS_COMPLEX
#ifndef MBS_FUNCTIONS_H_CS
#define MBS_FUNCTIONS_H_CS
#define MBS_FUNCTIONS_BODY
#endif
#else
#ifndef MBS_FUNCTIONS_H_D
#define MBS_FUNCTIONS_H_D
#define MBS_FUNCTIONS_BODY
#endif
#endif

#ifdef MBS_FUNCTIONS_BODY
#undef MBS_FUNCTIONS_BODY

#include "base/scalar.h"
#include "model/model_impl.h"

/* f(t) and, if dfdt != NULL, df/dt. No allocation. */
mreal MBS_K(mbs_func_eval)(const mbs_func_info *f, const mreal *x, mreal t, mreal *dfdt);

/* Directional derivative of f(t) along dx (model-vector direction; NULL:
 * 0): sum_j df/dx[f->x + j] dx[f->x + j]. No allocation (a spline is linear
 * in its values: the derivative is the spline of the direction). */
mreal MBS_K(mbs_func_eval_d)(const mbs_func_info *f, const mreal *x, const mreal *dx, mreal t);

/* Partial derivatives of f(t) with respect to the function's numbers
 * x[f->x + j], j = 0 .. f->nx - 1, into dfdx (nx entries). For a spline
 * these are the linear weights W_k(t) (they depend on t and the knot times
 * only); dfdx doubles as scratch, nothing is allocated. */
void MBS_K(mbs_func_dx)(const mbs_func_info *f, const mreal *x, mreal t, mreal *dfdx);

#ifndef MBS_COMPLEX
/* Adjoints of a spline (double only). A sum of weighted weight vectors,
 *     g = sum_n c_n W(t_n) + int s(t) W(t) dt,   W_k(t) = df(t)/dy_k,
 * is accumulated in O(1) per term and mapped to the knots once (O(n)):
 * on its interval i, f(t) = alpha M_i + beta M_{i+1} + gamma y_i +
 * delta y_{i+1} with M = T^-1 R y, so W(t) = R^T T^-T (alpha e_i + beta
 * e_{i+1}) + gamma e_i + delta e_{i+1}. acc holds 2 n doubles (the moment
 * part, then the value part), zeroed by the caller. */
/* acc += c W(t) */
void mbs_spline_adj_add(const mbs_func_info *f, double t, double c, double *acc);
/* acc += int_ta^tb s(t) W(t) dt, s the polynomial through (ts[k], s[k]),
 * k < ns (ns <= 12): Gauss-Legendre on every piece of [ta, tb] between
 * knots, exact for such s. */
void mbs_spline_adj_add_integral(const mbs_func_info *f, double ta, double tb, int ns, const double *ts,
                                 const double *s, double *acc);
/* dfdx[k] = g_k (n entries); acc is overwritten. */
void mbs_spline_adj_finish(const mbs_func_info *f, double *acc, double *dfdx);
/* The knot nearest to t (the first or last outside the knots): W_k(t) is
 * of order one there (1 at t = t_k). */
int mbs_spline_nearest_knot(const mbs_func_info *f, double t);
/* Gauss-Legendre rule of G points (1..8) on [0, 1]: nodes u, weights w. */
void mbs_gauss_legendre01(int G, const double **u, const double **w);
#endif

#endif
