/* joint_table.c - joint type and velocity convention -> implementation. */
#include "joint.h"
#include "mbsens/model.h"

const mbs_joint_ops *MBS_K(mbs_joint_ops_of)(int type, int velocities)
{
    const int tg = velocities == MBS_VELOCITIES_TANGENT;
    switch (type) {
    case MBS_JOINT_FIXED: return &MBS_K(mbs_joint_fixed);
    case MBS_JOINT_REVOLUTE: return &MBS_K(mbs_joint_revolute);
    case MBS_JOINT_PRISMATIC: return &MBS_K(mbs_joint_prismatic);
    case MBS_JOINT_CYLINDRICAL: return &MBS_K(mbs_joint_cylindrical);
    case MBS_JOINT_CARDAN: return &MBS_K(mbs_joint_cardan);
    case MBS_JOINT_SPHERICAL: return tg ? &MBS_K(mbs_joint_spherical_tangent) : &MBS_K(mbs_joint_spherical);
    case MBS_JOINT_PLANAR: return &MBS_K(mbs_joint_planar);
    case MBS_JOINT_FLOATING: return tg ? &MBS_K(mbs_joint_floating_tangent) : &MBS_K(mbs_joint_floating);
    default: return 0;
    }
}
