/* constraint_spherical.c - cut spherical joint: P_c - P_p = 0 (3 rows; thesis §3.5, eq. 3.51). */
#include "constraint_common.h"

static const char *const names[] = { "point x", "point y", "point z" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_PP, CON_PC, 0, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    (void)e;
    con_diff_jac(CON_PP, CON_PC, 0, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_spherical) = { "spherical", 3, 1u << CON_PP | 1u << CON_PC, names, eval, jac };
