/*
 * euler.c - mbs_euler_omega_from_rates, mbs_euler_rates_from_omega: the
 * angular velocity of Euler parameters and its inverse, w = 2 E(p) pdot,
 * pdot = E(p)^T w / 2.
 */
#include "mbsens/mbsens.h"
#include "base/algebra.h"
#include "kernels/results.h"

int mbs_euler_omega_from_rates(const double p[4], const double pdot[4], double w[3])
{
    double E[12];
    ep_E(E, p);
    for (int r = 0; r < 3; r++)
        w[r] = 2 * (E[4 * r] * pdot[0] + E[4 * r + 1] * pdot[1] + E[4 * r + 2] * pdot[2] + E[4 * r + 3] * pdot[3]);
    char msg[128];
    return mbs_results_finite(NULL, "Euler rates", MBS_RESULTS({ "w", w, 3, 1, MBS_IX_NONE, 0 }), msg, sizeof msg);
}

int mbs_euler_rates_from_omega(const double p[4], const double w[3], double pdot[4])
{
    double E[12];
    ep_E(E, p);
    for (int c = 0; c < 4; c++)
        pdot[c] = 0.5 * (E[c] * w[0] + E[4 + c] * w[1] + E[8 + c] * w[2]);
    char msg[128];
    return mbs_results_finite(NULL, "Euler rates", MBS_RESULTS({ "pdot", pdot, 4, 1, MBS_IX_NONE, 0 }), msg,
                              sizeof msg);
}
