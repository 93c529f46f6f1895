/* joint_table.c - joint type -> implementation. */
#include "joint.h"
#include "mbsens/model.h"

const mbs_joint_ops *MBS_K(mbs_joint_ops_of)(int type)
{
    switch (type) {
    case MBS_JOINT_FIXED: return &MBS_K(mbs_joint_fixed);
    case MBS_JOINT_REVOLUTE: return &MBS_K(mbs_joint_revolute);
    case MBS_JOINT_PRISMATIC: return &MBS_K(mbs_joint_prismatic);
    case MBS_JOINT_CYLINDRICAL: return &MBS_K(mbs_joint_cylindrical);
    case MBS_JOINT_CARDAN: return &MBS_K(mbs_joint_cardan);
    case MBS_JOINT_SPHERICAL: return &MBS_K(mbs_joint_spherical);
    case MBS_JOINT_PLANAR: return &MBS_K(mbs_joint_planar);
    case MBS_JOINT_FLOATING: return &MBS_K(mbs_joint_floating);
    default: return 0;
    }
}
