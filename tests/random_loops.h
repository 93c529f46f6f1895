/* random_loops.h - random closed-loop models for the tests. */
#ifndef MBS_RANDOM_LOOPS_H
#define MBS_RANDOM_LOOPS_H

#include "testutil.h"

/* A random tree of nb bodies (every joint type, random points, axes and
 * refs, each body with a point "p") plus ncut cut joints between random
 * pairs of bodies (the ground included), of types cut_types[k]
 * (mbs_joint_type), marked "cut". Their joint frames are taken from the
 * pose at a random configuration *qc (malloc'd, nq, returned), so every
 * loop is closed there: Phi(qc) = 0. With drivers: a coordinate driver on a
 * random non-Euler coordinate (sine law, satisfied at t = 0) when there is
 * one, and a distance driver between two body points (linear law,
 * satisfied at t = 0). NULL on failure (printed). */
mbs_model *mbs_test_random_loops(mbs_rng *r, int nb, int ncut, const int *cut_types, int drivers, double **qc);

/* Options of mbs_test_random_loops_ex. */
typedef struct mbs_test_loops_options {
    int drivers;      /* the two drivers above */
    int q0;           /* the joints' initial coordinates are *qc (loops closed at q0) */
    int elements;     /* force elements and parameters (below) */
    double horizon;   /* elements: the spline's knots span [0, horizon] */
    int fixed;        /* with q0: "assembly.fixed" coordinates (non-Euler, greedy in coordinate
                       * order) that complete Phi_q at q0 to full column rank */
} mbs_test_loops_options;

/* mbs_test_random_loops with options; with elements = 0 and q0 = 0 the same
 * model from the same draws. With elements, drawn after the cuts and
 * drivers: a cubic spline "u" (5 knots on [0, horizon]) driving a
 * joint_force "tq" on a random tree coordinate, a joint spring-damper "js",
 * a spring_damper "sd" between the points p of two bodies (or a ground
 * point), a constant body load "ld"; and parameters, named as their
 * targets, at the model's values: a mass, a principal inertia, a CoM
 * coordinate, a coordinate of a point p, sd.stiffness|damping|length,
 * js.stiffness|position, tq.value, u.values[0..4], one ld.force[k] (the
 * tq/js ones only when a non-Euler coordinate was found). */
mbs_model *mbs_test_random_loops_ex(mbs_rng *r, int nb, int ncut, const int *cut_types,
                                    const mbs_test_loops_options *opt, double **qc);

/* The tangent tests' model set, in a fixed order of draws from r: nloops
 * random closed loops (2..7 bodies, 1..2 cuts of every type in turn,
 * drivers on every other), ntrees random trees with parameters of every
 * kind (mbs_test_random_tree_p), then the four shipped closed-loop models.
 * fn(user, r, m, qc, it, name): it the index of the random model (qc its
 * closed configuration, NULL for the trees), or -1 for a shipped model. */
typedef void (*mbs_test_model_fn)(void *user, mbs_rng *r, const mbs_model *m, const double *qc, int it,
                                  const char *name);
void mbs_test_for_tangent_models(mbs_rng *r, int nloops, int ntrees, mbs_test_model_fn fn, void *user);

#endif
