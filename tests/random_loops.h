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

#endif
