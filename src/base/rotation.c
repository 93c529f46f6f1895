/*
 * rotation.c - rotation matrix to unit quaternion (mbsens/kinematics.h).
 */
#include <math.h>

#include "mbsens/kinematics.h"

/* The largest of 4 w^2, 4 x^2, 4 y^2, 4 z^2 (from the trace and the
 * diagonal) is taken as the pivot, so that no division is by a small
 * number; the sign is then fixed so that w >= 0. */
void mbs_rotation_quaternion(const double A[9], double q[4])
{
    const double tr = A[0] + A[4] + A[8];
    double d[4] = { 1 + tr, 1 + A[0] - A[4] - A[8], 1 - A[0] + A[4] - A[8], 1 - A[0] - A[4] + A[8] };
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (d[i] > d[k]) k = i;
    const double s = 0.5 / sqrt(d[k]);
    switch (k) {
    case 0:
        q[0] = 0.5 * sqrt(d[0]); q[1] = (A[7] - A[5]) * s; q[2] = (A[2] - A[6]) * s; q[3] = (A[3] - A[1]) * s;
        break;
    case 1:
        q[0] = (A[7] - A[5]) * s; q[1] = 0.5 * sqrt(d[1]); q[2] = (A[1] + A[3]) * s; q[3] = (A[2] + A[6]) * s;
        break;
    case 2:
        q[0] = (A[2] - A[6]) * s; q[1] = (A[1] + A[3]) * s; q[2] = 0.5 * sqrt(d[2]); q[3] = (A[5] + A[7]) * s;
        break;
    default:
        q[0] = (A[3] - A[1]) * s; q[1] = (A[2] + A[6]) * s; q[2] = (A[5] + A[7]) * s; q[3] = 0.5 * sqrt(d[3]);
        break;
    }
    if (q[0] < 0)
        for (int i = 0; i < 4; i++) q[i] = -q[i];
}
