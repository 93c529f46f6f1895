/* constraint_planar.c - cut planar joint: the normals coincide,
 * u_c - u_p = 0, and P_c stays in the plane through P_p normal to u_p,
 * u_p . (P_c - P_p) = 0 (4 rows, 3 independent; thesis §3.5, eq. 3.71). */
#include "constraint_common.h"

static const char *const names[] = { "axis x", "axis y", "axis z", "plane" };

static void eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi, mreal *phid,
                 mreal *phidd)
{
    con_diff_eval(e, ed, edd, CON_UP, CON_UC, 0, phi, phid, phidd);
    con_plane_eval(e, ed, edd, CON_UP, CON_PP, CON_PC, 3, phi, phid, phidd);
}

static void jac(const mreal *const *e, mreal *G)
{
    con_diff_jac(CON_UP, CON_UC, 0, G);
    con_plane_jac(e, CON_UP, CON_PP, CON_PC, 3, G);
}

const MBS_K(mbs_con_ops) MBS_K(mbs_con_planar) = {
    "planar", 4, 1u << CON_PP | 1u << CON_PC | 1u << CON_UP | 1u << CON_UC, names, eval, jac };
