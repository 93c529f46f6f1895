/* constraint_fixed.c - cut fixed joint: point and two vectors coincide,
 * P_c - P_p = 0, u_c - u_p = 0, v_c - v_p = 0 (9 rows, 6 independent). */
#include "constraint_common.h"

static const char *const names[] = { "point x", "point y", "point z", "axis x", "axis y", "axis z",
                                     "ref x",   "ref y",   "ref z" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_PP, CON_PC, 0, phi, phid, phidd);
    con_diff_eval(e, ed, edd, CON_UP, CON_UC, 3, phi, phid, phidd);
    con_diff_eval(e, ed, edd, CON_VP, CON_VC, 6, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    (void)e;
    con_diff_jac(CON_PP, CON_PC, 0, G);
    con_diff_jac(CON_UP, CON_UC, 3, G);
    con_diff_jac(CON_VP, CON_VC, 6, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_fixed) = { "fixed", 9, 0x3fu, names, eval, jac };
