/* Fixed joint: no coordinates; the child keeps the placement given by the
 * two joint frames. */
#include "joint.h"

static void motion(const mreal *q, mreal *R, mreal *t)
{
    (void)q;
    for (int k = 0; k < 9; k++) R[k] = 0;
    R[0] = R[4] = R[8] = 1;
    t[0] = t[1] = t[2] = 0;
}
static void subspace(const mreal *q, mreal *S) { (void)q; (void)S; }
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd) { (void)q; (void)qd; (void)Sd; }

const mbs_joint_ops MBS_K(mbs_joint_fixed) = { "fixed", 0, 0, -1, motion, subspace, subspace_dot };
