/* constraint_cardan.c - cut cardan (universal) joint: P_c - P_p = 0 and the
 * cross stays square, u_p . v_c = 0 (4 rows; thesis §3.5, eq. 3.68). The
 * cross of the joint is the parent axis u_p and the child ref v_c
 * (R = Rot(e1, th1) Rot(e2, th2), docs/model-format.md). */
#include "constraint_common.h"

static const char *const names[] = { "point x", "point y", "point z", "cross" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_PP, CON_PC, 0, phi, phid, phidd);
    con_dot_eval(e, ed, edd, CON_UP, CON_VC, 3, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    con_diff_jac(CON_PP, CON_PC, 0, G);
    con_dot_jac(e, CON_UP, CON_VC, 3, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_cardan) = {
    "cardan", 4, 1u << CON_PP | 1u << CON_PC | 1u << CON_UP | 1u << CON_VC, names, eval, jac };
