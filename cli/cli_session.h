/*
 * cli_session.h - what the simulating commands share: the model with its
 * data, and the options of a simulation (--formulation, --ref, --dt, --tf
 * and the integrator's) applied to an mbs_sim_options.
 */
#ifndef MBS_CLI_SESSION_H
#define MBS_CLI_SESSION_H

#include <stdio.h>

#include "mbsens/mbsens.h"

/* --formulation: an mbs_fd_algorithm (open trees), or CLI_LOOP plus an
 * mbs_loop_formulation other than none (closed loops). */
enum { CLI_LOOP = 100 };
int cli_formulation_from_name(const char *name);   /* -1 if unknown */

/* The simulation options of a command line, each at its "absent" value
 * (cli_options.h) unless given. */
typedef struct cli_sim_args {
    int formulation;      /* cli_formulation_from_name */
    int ref;              /* mbs_ref_point */
    double dt, tf;
    int integrator;       /* mbs_integrator_type */
    int solver;           /* mbs_nl_solver */
    int cvodes_method;    /* mbs_cvodes_method */
    int tangent;          /* 0 fd, 1 analytic */
    int tangent_update;   /* mbs_tangent_update */
    int projection;       /* mbs_projection */
    double tolerance, rtol, atol, penalty, proj_scale;
    long max_iterations;
    int no_project;
} cli_sim_args;

/* Every field absent. */
cli_sim_args cli_sim_args_absent(void);
/* --tangent: fd 0, analytic 1, else -1. */
int cli_tangent_from_name(const char *name);

/* The options given, over o. A formulation fr or semi also sets the loop
 * formulation to none; a closed-loop one sets the loop formulation. */
void cli_sim_apply(const cli_sim_args *a, mbs_sim_options *o);

/* A loaded model and, when asked for, its data with the reference point. */
typedef struct cli_session {
    mbs_model *m;
    mbs_data *d;
} cli_session;

/* Load the model at path and, with ref >= 0, create its data
 * (cli_session_data). CLI_EXIT_OK, or CLI_EXIT_FAIL with a message for cmd
 * and nothing left allocated. */
int cli_session_open(cli_session *s, const char *cmd, const char *path, int ref);
/* Create the data of the model with the reference point ref (an
 * mbs_ref_point). CLI_EXIT_OK, or CLI_EXIT_FAIL with a message. */
int cli_session_data(cli_session *s, const char *cmd, int ref);
void cli_session_close(cli_session *s);

/* ---- state shared by kinematics and inverse ---- */
typedef struct cli_state {
    mbs_model *m;
    mbs_data *d;
    int nq, nv;             /* coordinates (q), velocities (qd, qdd) */
    mbs_ref_point ref;
    double *q, *qd, *qdd;
} cli_state;

/* Load the model, create the data, set the reference point and fill q, qd,
 * qdd from the option texts (NULL: the model's q0, qd0, and zero).
 * Returns CLI_EXIT_OK, or the exit status after printing an error. */
int cli_state_init(cli_state *st, const char *cmd, const char *model_path,
                   const char *q, const char *qd, const char *qdd,
                   const char *ref, void (*usage)(FILE *));
void cli_state_free(cli_state *st);

#endif
