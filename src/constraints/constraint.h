/*
 * constraint.h - the one interface every loop-closure (cut joint) type
 * implements, and the constraint kernels (internal; templated over mreal
 * like src/joints/joint.h, compiled twice).
 *
 * A cut joint keeps the two joint frames of the joint it replaces: on the
 * parent-side body the point P_p and the triad X_p, on the child-side body
 * P_c and X_c. Its equations are written on six global "entities":
 *
 *     e[0] = r(P_p)         e[1] = r(P_c)             (points)
 *     e[2] = u_p = A_p X_p e1   e[3] = u_c = A_c X_c e1   (joint axes)
 *     e[4] = v_p = A_p X_p e2   e[5] = v_c = A_c X_c e2   (refs)
 *
 * entity k lives on body[k & 1] of the cut. A type supplies
 *   - eval: Phi(e) and, when the derivatives of the entities are given,
 *     dPhi/dt and d2Phi/dt2 (chain rule; the equations are at most
 *     bilinear in the entities, so d2Phi/dt2 = Phi_e e'' + second-order
 *     products of e');
 *   - jac: G = dPhi/de (nrows x 18, row-major; entity k in columns 3k..3k+2),
 *     the thesis's Phi_q;
 * and nothing else: the topological derivatives dq/dz are shared
 * (constraint_kernel.c). Writing a new cut type: one file
 * src/constraints/constraint_NAME.c and a line in constraint_table.c.
 *
 *   type         rows  equations (d = P_c - P_p)
 *   spherical     3    d = 0
 *   revolute      6    d = 0, u_c - u_p = 0
 *   cylindrical   6    u_c - u_p = 0, u_p x d = 0
 *   prismatic     9    u_c - u_p = 0, u_p x d = 0, v_c - v_p = 0
 *   cardan        4    d = 0, u_p . v_c = 0   (the cross: parent axis, child ref)
 *   planar        4    u_c - u_p = 0, u_p . d = 0
 *   fixed         9    d = 0, u_c - u_p = 0, v_c - v_p = 0
 *   floating      0
 * All are satisfied with the two frames coinciding, i.e. where the joint
 * would be at q = 0 (docs/model-format.md); cylindrical, prismatic and
 * planar also along their free motions.
 */
#ifdef MBS_COMPLEX
#ifndef MBS_CONSTRAINT_H_CS
#define MBS_CONSTRAINT_H_CS
#define MBS_CONSTRAINT_BODY
#endif
#else
#ifndef MBS_CONSTRAINT_H_D
#define MBS_CONSTRAINT_H_D
#define MBS_CONSTRAINT_BODY
#endif
#endif

#ifdef MBS_CONSTRAINT_BODY
#undef MBS_CONSTRAINT_BODY

#include "../kernels/kernels.h"

#define MBS_CON_NENT 6
#define MBS_CON_MAXROWS 9

typedef struct MBS_K(mbs_con_ops) {
    const char *name;
    int nrows;
    unsigned used;                 /* bit k set: entity k enters the equations */
    const char *const *row_names;  /* nrows suffixes: "point x", ... */
    /* Phi (nrows); phid and phidd only if ed (resp. ed and edd) are given */
    void (*eval)(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, mreal *phi,
                 mreal *phid, mreal *phidd);
    /* G = dPhi/de: nrows x 18 row-major */
    void (*jac)(const mreal *const *e, mreal *G);
} MBS_K(mbs_con_ops);

extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_fixed);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_revolute);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_prismatic);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_cylindrical);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_cardan);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_spherical);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_planar);
extern const MBS_K(mbs_con_ops) MBS_K(mbs_con_floating);

/* By mbs_joint_type (constraint_table.c); NULL if invalid. */
const MBS_K(mbs_con_ops) *MBS_K(mbs_con_ops_of)(int type);

/* Entities of cut c from the kinematics in w (level 0: e; 1: + ed;
 * 2: + edd, the accelerations in w: those at qdd = 0 if the kinematics ran
 * with qdd = NULL). ed / edd may be NULL. */
void MBS_K(mbs_con_entities)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                             const mbs_cut_info *c, mreal e[MBS_CON_NENT][3], mreal ed[MBS_CON_NENT][3],
                             mreal edd[MBS_CON_NENT][3]);

/* Second time derivative of spline f with values y (y[k], k < f->n) at t
 * (driver_spline.c; linear in y). */
mreal MBS_K(mbs_spline_dd)(const mbs_func_info *f, const mreal *y, mreal t);

/* Time function of driver dr at t: f, f', f''. */
void MBS_K(mbs_driver_law)(const mbs_model *m, const mbs_driver_info *dr, const mreal *x, mreal t, mreal *f,
                           mreal *fd, mreal *fdd);

/* The constraint kernel. Needs kinematics in w at (q, qd) (level >= 1 if
 * phid, b or c are wanted, level 2 with qdd = NULL for c). Any output may
 * be NULL; sizes as in mbsens/constraints.h (Phi_q: n x nv row-major,
 * overwritten). phidd (n), if given, is d2Phi/dt2 with the accelerations
 * in w (needs qdd: the one the kinematics ran with). */
void MBS_K(mbs_con_kernel)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *q,
                           const mreal *qd, const mreal *qdd, mreal t, mreal *phi, mreal *Phi_q, mreal *phid,
                           mreal *b, mreal *c, mreal *phidd);

/* ---- tangents (constraint_kernel_d.c, beside the kernel) ----
 * Directional derivatives along (dq, dqd, dqdd) in the state and dx in the
 * model vector (any NULL = 0). w: primal level-2 kinematics at (q, qd, qdd)
 * (qdd as given, NULL = 0); dw: mbs_kin_forward_d level 2 along the same
 * direction for all bodies. Outputs (any NULL): dphi (n), dPhi_q (n x nv,
 * row-major, overwritten), dphid (n), dphidd (n: d2Phi/dt2 = Phi_q qdd - c
 * at that qdd). Time is not differentiated. Then dc = dPhi_q qdd +
 * Phi_q dqdd - dphidd.
 * The per-state part of every cut (entities, G blocks) is kept in w's cut
 * cache (w->ccache, written although w is const: one workspace must not be
 * used by two calls at once) and reused only when the bits of its inputs
 * in w and x equal those it holds, so any sequence of primal
 * evaluations in w is safe (constraint_kernel_d.c). */
void MBS_K(mbs_con_kernel_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                             const MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *qdd,
                             const mreal *dq, const mreal *dqd, const mreal *dqdd, mreal t, mreal *dphi,
                             mreal *dPhi_q, mreal *dphid, mreal *dphidd);
/* The cut cache of a workspace w for m (w->ccache): created and attached
 * (one entry per cut; none without cuts), freed with w by mbs_ws_free.
 * Returns 0, or -1 out of memory. A workspace without it computes the
 * per-state part on every call, with the same result. */
int MBS_K(mbs_con_cache_attach)(MBS_K(mbs_ws) *w, const mbs_model *m);
/* Test hook (tests/test_call_order.c; see mbs_ws_scribble): every entry of
 * w's cut cache, if it has one, marked valid with garbage in it and in its
 * key. */
void MBS_K(mbs_con_cache_scribble)(MBS_K(mbs_ws) *w, const mbs_model *m, uint64_t *s);
/* A global component comp (0..2) of the point x[xp..xp+2] of body `body`
 * as a function of q (Matrix R's independent coordinates): val = value,
 * velocity, acceleration (w: level 2, at its qdd); row = its Jacobian
 * d r_comp / dq (nv, overwritten; may be NULL). And their tangents (w, dw
 * as for mbs_con_kernel_d). */
void MBS_K(mbs_con_point_component)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, int body, int xp,
                                    int comp, mreal val[3], mreal *row);
void MBS_K(mbs_con_point_component_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal *dx,
                                      const MBS_K(mbs_ws) *dw, int body, int xp, int comp, mreal dval[3],
                                      mreal *drow);
/* Tangent of mbs_driver_law along dx (the law's numbers): df, df', df''. */
void MBS_K(mbs_driver_law_d)(const mbs_model *m, const mbs_driver_info *dr, const mreal *x, const mreal *dx,
                             mreal t, mreal *df, mreal *dfd, mreal *dfdd);

#endif
