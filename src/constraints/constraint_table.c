/* constraint_table.c - cut-joint types by mbs_joint_type. */
#include "constraint.h"

const MBS_K(mbs_con_ops) *MBS_K(mbs_con_ops_of)(int type)
{
    switch (type) {
    case MBS_JOINT_FIXED: return &MBS_K(mbs_con_fixed);
    case MBS_JOINT_REVOLUTE: return &MBS_K(mbs_con_revolute);
    case MBS_JOINT_PRISMATIC: return &MBS_K(mbs_con_prismatic);
    case MBS_JOINT_CYLINDRICAL: return &MBS_K(mbs_con_cylindrical);
    case MBS_JOINT_CARDAN: return &MBS_K(mbs_con_cardan);
    case MBS_JOINT_SPHERICAL: return &MBS_K(mbs_con_spherical);
    case MBS_JOINT_PLANAR: return &MBS_K(mbs_con_planar);
    case MBS_JOINT_FLOATING: return &MBS_K(mbs_con_floating);
    default: return 0;
    }
}
