/*
 * mbsens/check.h - verify the analytical derivatives on any model.
 *
 * Compares every analytical derivative block (include/mbsens/derivatives.h)
 * with the complex-step derivative of the same dynamics (the kernels
 * compiled with a complex scalar, exact to round-off), at random or given
 * states, for one reference point and both forward-dynamics algorithms,
 * and derives each block's tolerance from the round-off of the recursions
 * and the conditioning of the mass matrix at each state.
 */
#ifndef MBSENS_CHECK_H
#define MBSENS_CHECK_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MBS_CHECK_DTAU_DQ = 0,
    MBS_CHECK_DTAU_DQD,
    MBS_CHECK_DTAU_DRHO,
    MBS_CHECK_DQDD_DQ,
    MBS_CHECK_DQDD_DQD,
    MBS_CHECK_DQDD_DTAU,
    MBS_CHECK_DQDD_DRHO,
    MBS_CHECK_FR_VS_SEMI,
    MBS_CHECK_NBLOCKS
};

typedef struct mbs_check_report {
    int samples;
    /* worst relative error max|a - b| / max(1, max|b|) per block */
    double worst[MBS_CHECK_NBLOCKS];
    /* The tolerance derived at each sample (docs/formulations.md, "Checking
     * the derivatives"): the round-off of the recursions, 1000 nb eps, for
     * the inverse-dynamics blocks; that plus 2 nv eps kappa for the blocks
     * that solve with M (dqdd/..., fr vs semi), kappa the 2-norm condition
     * number of M completed by p p^T for the Euler parameters. tol: its
     * largest value over the samples; ratio: the largest error / tolerance
     * of one sample (the derivatives pass when every ratio is <= 1); cond:
     * the largest kappa. */
    double tol[MBS_CHECK_NBLOCKS];
    double ratio[MBS_CHECK_NBLOCKS];
    double cond;
} mbs_check_report;

/* Name of a block ("dtau/dq", ...). */
const char *mbs_check_block_name(int block);

/* Run the comparison at `samples` random states (seeded; Euler parameters
 * normalized, random velocities, accelerations and actuation), or at the
 * single state (q, qd) if q is not NULL. Returns MBS_OK or an error (bad
 * arguments, numerical failure of the dynamics at a sample). */
int mbs_check_derivatives(const mbs_model *m, int samples, unsigned long seed,
                          mbs_ref_point ref, const double *q, const double *qd,
                          mbs_check_report *report, mbs_error *err);

#ifdef __cplusplus
}
#endif
#endif
