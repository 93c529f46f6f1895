/* force_table.c - force type -> implementation, and the loops over the
 * elements of a model (called by mbs_data_prepare_loads, src/dynamics/data.c). */
#include "force.h"

const MBS_K(mbs_force_ops) *MBS_K(mbs_force_ops_of)(int type)
{
    switch (type) {
    case MBS_FORCE_SPRING_DAMPER: return &MBS_K(mbs_force_spring_damper);
    case MBS_FORCE_JOINT_SPRING: return &MBS_K(mbs_force_joint_spring);
    case MBS_FORCE_JOINT_FORCE: return &MBS_K(mbs_force_joint_force);
    case MBS_FORCE_BODY_LOAD: return &MBS_K(mbs_force_body_load);
    case MBS_FORCE_CONTACT_PLANE: return &MBS_K(mbs_force_contact_plane);
    case MBS_FORCE_TIRE: return &MBS_K(mbs_force_tire);
    default: return 0;
    }
}

void MBS_K(mbs_forces_apply_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                               const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd,
                               const mreal *dq, const mreal *dqd, mreal *dqfrc, mreal t)
{
    if (!dqfrc) dqfrc = dw->qfrc;
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        const MBS_K(mbs_force_ops) *ops = MBS_K(mbs_force_ops_of)(fe->type);
        if (ops && ops->apply_d) ops->apply_d(m, fe, x, w, dx, dw, q, qd, dq, dqd, dqfrc, t);
    }
}

void MBS_K(mbs_forces_apply)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                             const mreal *q, const mreal *qd, mreal t)
{
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        const MBS_K(mbs_force_ops) *ops = MBS_K(mbs_force_ops_of)(fe->type);
        if (ops) ops->apply(m, fe, x, w, q, qd, t);
    }
}

mreal MBS_K(mbs_forces_energy)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                               const mreal *q)
{
    mreal V = 0;
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        const MBS_K(mbs_force_ops) *ops = MBS_K(mbs_force_ops_of)(fe->type);
        if (ops && ops->energy) V += ops->energy(m, fe, x, w, q);
    }
    return V;
}
