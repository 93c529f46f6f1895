/* constraint_prismatic.c - cut prismatic joint: the cylindrical equations
 * plus v_c - v_p = 0 locking the rotation about the axis (9 rows, 5
 * independent; thesis §3.5, Table 7.8 "9 (+1)"). */
#include "constraint_common.h"

static const char *const names[] = { "axis x", "axis y", "axis z", "line x", "line y", "line z",
                                     "ref x",  "ref y",  "ref z" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_UP, CON_UC, 0, phi, phid, phidd);
    con_line_eval(e, ed, edd, CON_UP, CON_PP, CON_PC, 3, phi, phid, phidd);
    con_diff_eval(e, ed, edd, CON_VP, CON_VC, 6, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    con_diff_jac(CON_UP, CON_UC, 0, G);
    con_line_jac(e, CON_UP, CON_PP, CON_PC, 3, G);
    con_diff_jac(CON_VP, CON_VC, 6, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_prismatic) = { "prismatic", 9, 0x3fu, names, eval, jac };
