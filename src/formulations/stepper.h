/*
 * stepper.h - what a closed-loop formulation's step reads and writes
 * (internal). The integrator owns the formulation and calls its stepper;
 * the formulation never sees the integrator (docs/architecture.md).
 */
#ifndef MBS_STEPPER_H
#define MBS_STEPPER_H

#include "mbsens/simulate.h"

struct mbs_form;

/* The state a step starts from, and where it reports. */
typedef struct mbs_step_io {
    double t;                       /* the step's start time */
    const double *q, *qd, *qdd;     /* the state at t (n each) */
    mbs_sim_stats *st;              /* the owner's statistics: evaluations, factorizations, ... */
    char *msg;                      /* MBS_ERROR_MSG_LEN bytes: the failure's message */
    int kin_ready;                  /* out: the step left in the data the level-2 kinematics of
                                     * the new state */
} mbs_step_io;

/* A formulation's step of length h from io's state: on success the new
 * state is the formulation's (z, zd, zdd) at step.t after
 * step.iterations iterations (mbs_form_step_done); on failure the message
 * is in io->msg and the formulation's state is not to be used. */
typedef struct mbs_stepper {
    const char *name;
    int (*step)(struct mbs_form *f, mbs_step_io *io, double h);
} mbs_stepper;

#endif
