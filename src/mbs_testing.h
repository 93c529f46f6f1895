/*
 * mbs_testing.h - the one internal header of the test programs (internal:
 * not installed, not part of the API). Tests include it and the headers of
 * include/mbsens/, nothing else of src/ (scripts/layers.conf: test-header). Each group says
 * what the tests need it for and why it is not public.
 *
 * A test that defines MBS_COMPLEX before including it gets the kernels'
 * group in the complex-step build (mreal = double complex, symbols *_cs);
 * the groups written over double only are then left out, since their
 * types name the double kernels.
 */
#ifndef MBS_TESTING_H
#define MBS_TESTING_H

#include "mbsens/mbsens.h"

/* Building models in C without a file: the random trees and closed loops
 * of the tests (tests/random_model.c, random_loops.c) and the builder's
 * messages. The loaders are its public users. */
#include "builder/builder.h"

/* The layout of mbs_model: tests read fields that have no accessor (the
 * model vector x and its offsets, joint and cut tables) and compare
 * models field by field (tests/model_compare.c). */
#include "model/model_impl.h"
#include "model/model_util.h"

/* The kernels and their workspace, the force-element and constraint
 * kernels and their tangents, in the scalar build of the test: the
 * complex-step references of every derivative. */
#include "base/algebra.h"
#include "kernels/kernels.h"
#include "kernels/functions.h"
#include "forces/force.h"
#include "forces/force_contact_common.h"
#include "constraints/constraint.h"
#include "formulations/form_tangent.h"

/* The joint types' operations (joints/joint.h) and the exponential maps of
 * SO(3) and SE(3) with their Jacobians (joints/manifold.h; the complex
 * build declares the double functions too): tests/test_manifold.c checks
 * them against the complex step and differences. Internal: they act on
 * one joint's numbers, not on a model's. */
#include "joints/joint.h"
#include "joints/manifold.h"

/* Scribbling over the scratch of an mbs_data (tests/test_call_order.c:
 * a result never depends on the calls made before it). */
#include "dynamics/scribble.h"

/* Small helpers of the loaders and writers, tested on their own. */
#include "base/hashmap.h"
#include "base/format_double.h"

#ifndef MBS_COMPLEX
/* Written over double only: the layout of mbs_data, the derivative
 * building blocks, the formulations' and integrators' internals (their
 * tangents checked against differences), the objectives' parser. */
#include "kernels/data.h"
#include "kernels/jacobians_1dof.h"
#include "dynamics/derivatives.h"
#include "formulations/form_impl.h"
#include "integrators/integrator_impl.h"
#include "io/load_objectives.h"
#endif

/* The fast paths' switches, declared here for the complex-step tests too
 * (kernels/jacobians_1dof.h and dynamics/derivatives.h name the double
 * kernels' types): whether the fused 1-DOF pass applies, forcing its
 * SSE2 loops, the pass itself, and the FD derivatives' choice of the
 * dense M'^-1. */
int mbs_jac1_usable(const mbs_model *m, const mbs_data *d);
int mbs_jac1_set_avx2(mbs_data *d, int on);
int mbs_jac1_id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                         const double *qdd, double *tau, double *dtau_dq, double *dtau_dqd, double *M);
int mbs_deriv_fd_inverse_dense(const mbs_model *m);

/* The derivative check (dynamics/check.c) with the complex step run on cm,
 * a model of m's layout whose values may differ: a derivative that does
 * not match its reference must fail the check (tests/test_check.c). */
int mbs_check_derivatives_against(const mbs_model *m, const mbs_model *cm, int samples, unsigned long seed,
                                  mbs_ref_point ref, const double *q, const double *qd,
                                  mbs_check_report *report, mbs_error *err);

#endif
