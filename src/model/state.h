/* state.h - a state checked against the model (internal; state.c). */
#ifndef MBS_STATE_H
#define MBS_STATE_H

#include "mbsens/error.h"
#include "mbsens/model.h"

/* Finite values and Euler parameters normalized to 1e-6 (NULL vectors
 * skipped): MBS_OK, or MBS_ERR_NUMERIC with the message in msg naming the
 * coordinate or the joint. (mbs_normalize_state, the projection onto
 * |p| = 1, is public: mbsens/kinematics.h.) */
int mbs_state_check(const mbs_model *m, const double *q, const double *qd, const double *qdd,
                    char msg[MBS_ERROR_MSG_LEN]);

/* The guard of the functions not yet written for tangent velocities
 * (docs/tangent-plan.md, package A4): MBS_OK when no joint of m has tangent
 * velocities, else MBS_ERR_UNSUPPORTED with "WHAT: not yet implemented for
 * joint 'J' with tangent velocities (...)" in msg, J the first such joint. */
int mbs_tangent_unsupported(const mbs_model *m, const char *what, char msg[MBS_ERROR_MSG_LEN]);
/* The same into an mbs_error (err may be NULL). */
int mbs_tangent_unsupported_err(const mbs_model *m, const char *what, mbs_error *err);

#endif
