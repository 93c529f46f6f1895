/* constraint_floating.c - cut floating joint: no equation (the two bodies
 * are free relative to each other; the cut only removes 7 coordinates). */
#include "constraint_common.h"

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    (void)e; (void)ed; (void)edd; (void)phi; (void)phid; (void)phidd;
}

static void jac(const mreal *const *e, mreal *G)
{
    (void)e; (void)G;
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_floating) = { "floating", 0, 0u, NULL, eval, jac };
