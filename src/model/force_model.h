/*
 * force_model.h - force elements and time functions on the model side
 * (internal; force_model.c): type names, the spline set-up, the checks,
 * the spline moments, deep copy and release. The kernels are in
 * src/forces/; the spring lengths of the initial configuration are set by
 * the builder's last stage (src/builder/finish_initial.c).
 */
#ifndef MBS_FORCE_MODEL_H
#define MBS_FORCE_MODEL_H

#include <stdio.h>
#include "model/model_impl.h"

/* Numbers of a function type in x (spline: its knots, n). */
int mbs_func_type_nx(mbs_func_type t, int n);

/* Times-only factorization of a spline through n >= 2 knots with strictly
 * increasing times t (see src/kernels/functions.c); coef gets 6 n numbers.
 * 0, or -1 if the times are not strictly increasing and finite. */
int mbs_spline_setup(int n, const double *t, int clamped, double *coef);

/* Checks on the numbers as they stand (parameters applied): all finite,
 * damping >= 0, step t1 > t0, sine frequency finite... MBS_OK or
 * MBS_ERR_MODEL naming the element ("<where>: spring_damper s1: ..."). */
int mbs_forces_check(const mbs_model *m, mbs_error *err);

/* For every spline, its second derivatives at the knots f''(t_k) for the
 * model's own values (in m->x): f->mom, with f->xm = m->x. A spline of the
 * model vector m->x is then evaluated in O(log n) (src/kernels/functions.c);
 * of any other vector (tangent directions, complex copies, other x), by
 * the O(n) sweep. Call whenever the values are set: after the parameters
 * are applied (builder, mbs_model_with_params); a copy gets its own
 * (mbs_forces_copy). MBS_OK or MBS_ERR_NOMEM. */
int mbs_forces_prepare(mbs_model *m, mbs_error *err);

/* Deep copy of the force and function arrays of m into c (whose pointers
 * are overwritten); 0, or -1 if memory runs out (c's arrays are then
 * consistent for mbs_forces_free). */
int mbs_forces_copy(mbs_model *c, const mbs_model *m);
void mbs_forces_free(mbs_model *m);

/* The functions and force elements of m, for mbs_model_print (nothing if
 * the model has none). */
void mbs_forces_print(const mbs_model *m, FILE *out);

#endif
