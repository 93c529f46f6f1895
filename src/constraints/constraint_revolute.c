/* constraint_revolute.c - cut revolute joint: P_c - P_p = 0, u_c - u_p = 0
 * (6 rows, 5 independent: redundant on purpose, constant G; thesis §3.5). */
#include "constraint_common.h"

static const char *const names[] = { "point x", "point y", "point z", "axis x", "axis y", "axis z" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_PP, CON_PC, 0, phi, phid, phidd);
    con_diff_eval(e, ed, edd, CON_UP, CON_UC, 3, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    (void)e;
    con_diff_jac(CON_PP, CON_PC, 0, G);
    con_diff_jac(CON_UP, CON_UC, 3, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_revolute) = {
    "revolute", 6, 1u << CON_PP | 1u << CON_PC | 1u << CON_UP | 1u << CON_UC, names, eval, jac };
