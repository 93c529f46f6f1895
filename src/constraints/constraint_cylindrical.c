/* constraint_cylindrical.c - cut cylindrical joint: u_c - u_p = 0 and
 * u_p x (P_c - P_p) = 0 (6 rows, 4 independent; thesis §3.5 with the
 * cross-product Jacobian of the errata: d(u x d)/du = -S(d), d/dd = S(u)). */
#include "constraint_common.h"

static const char *const names[] = { "axis x", "axis y", "axis z", "line x", "line y", "line z" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_UP, CON_UC, 0, phi, phid, phidd);
    con_line_eval(e, ed, edd, CON_UP, CON_PP, CON_PC, 3, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    con_diff_jac(CON_UP, CON_UC, 0, G);
    con_line_jac(e, CON_UP, CON_PP, CON_PC, 3, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_cylindrical) = {
    "cylindrical", 6, 1u << CON_PP | 1u << CON_PC | 1u << CON_UP | 1u << CON_UC, names, eval, jac };
