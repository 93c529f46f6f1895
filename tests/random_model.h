/* random_model.h - random trees mixing every joint type, for the tests. */
#ifndef MBS_RANDOM_MODEL_H
#define MBS_RANDOM_MODEL_H

#include "testutil.h"

/* A random tree of nb bodies. Joint types are drawn from `types` (bit k set
 * = mbs_joint_type k allowed; 0 = all). Bodies have random mass, CoM,
 * inertia (valid, rotated), a named point "p" and a vector "u"; joints have
 * random points, axes and refs. Returns NULL and prints on failure. */
mbs_model *mbs_test_random_tree(mbs_rng *r, int nb, unsigned types);
/* Same, with design parameters of every kind when with_params: gravity
 * component, per body mass, a CoM coordinate, an inertia entry, a joint
 * point coordinate that also moves the body's point "p" (two targets), and
 * the parent-side joint point coordinate. */
mbs_model *mbs_test_random_tree_p(mbs_rng *r, int nb, unsigned types, int with_params);

/* A random tree (as mbs_test_random_tree) with ndriver coordinate drivers
 * q_k - f_k(t) (sine laws) on distinct coordinates that are not Euler
 * parameters, half of them also under a joint spring and a joint force. */
mbs_model *mbs_test_random_tree_driven(mbs_rng *r, int nb, unsigned types, int ndriver);

/* A random tree of nb bodies left open in a builder, so that force
 * elements can be added: every joint type, random inertias (principal axes
 * along the body axes), a point "p" on each body; body handles 1..nb named
 * "b1".., joint handles 0..nb-1 named "j1"... tangent: 0, every joint with
 * Euler-rate velocities; 1, each spherical and floating joint tangent with
 * probability 1/2 (one draw per joint); 2, all of them tangent. Returns
 * NULL and prints on failure. */
struct mbs_builder *mbs_test_random_tree_builder(mbs_rng *r, int nb, int tangent);

/* Random state: q with normalized Euler parameters, qd with p.pd = 0,
 * qdd with p.pdd = -|pd|^2 (so q + t qd + t^2/2 qdd stays on |p| = 1 to
 * second order). Any of qd, qdd may be NULL. */
void mbs_test_random_state(mbs_rng *r, const mbs_model *m, double *q, double *qd, double *qdd);

#endif
