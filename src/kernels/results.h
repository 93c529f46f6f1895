/*
 * results.h - the check of what a public call hands back (internal).
 *
 * Every public entry point checks its results before it returns them:
 * every number finite, or MBS_ERR_NUMERIC with a message that names the
 * call, the result and its entry ("inverse dynamics: tau[theta1] is not
 * finite (-nan)"). Entry points that take an mbs_data put the message in
 * mbs_data_error (and clear it on success); those that take an mbs_error
 * put it there. The test is one addition per number (a sum that is finite
 * unless some entry is not, or it overflows); the entry is looked for only
 * when the sum is not finite.
 */
#ifndef MBS_RESULTS_H
#define MBS_RESULTS_H

#include <stddef.h>

#include "mbsens/mbsens.h"

/* What the rows and columns of a result are numbered by (their names in
 * the message). */
typedef enum mbs_index_kind {
    MBS_IX_NONE = 0,   /* plain numbers: [3] */
    MBS_IX_COORD,      /* coordinates (nq): [theta1] */
    MBS_IX_VEL,        /* velocities (nv): [theta1] (mbs_vel_name) */
    MBS_IX_PARAM,      /* design parameters: [m1] */
    MBS_IX_CON,        /* constraint rows: [cut.x] */
    MBS_IX_OBJ         /* objectives: [psi1] */
} mbs_index_kind;

/* One result: rows x cols numbers, row-major (a vector: cols = 1). x NULL:
 * not requested by the caller, skipped. */
typedef struct mbs_result {
    const char *name;
    const double *x;
    int rows, cols;
    mbs_index_kind rk, ck;
} mbs_result;

/* The arguments (array, count) for a list of results written in place:
 * mbs_data_results(d, "inverse dynamics", MBS_RESULTS({ "tau", tau, nv, 1, MBS_IX_COORD, 0 })). */
#define MBS_RESULTS(...)                                                                                               \
    ((const mbs_result[]){ __VA_ARGS__ }),                                                                             \
        (int)(sizeof((const mbs_result[]){ __VA_ARGS__ }) / sizeof(mbs_result))

/* MBS_OK when every number of the nr results is finite; otherwise
 * MBS_ERR_NUMERIC and "WHAT: NAME[ENTRY] is not finite (VALUE)" in msg. */
int mbs_results_finite(const mbs_model *m, const char *what, const mbs_result *r, int nr, char *msg,
                       size_t len);

/* The same with the message in mbs_data_error(d) (cleared on success). */
int mbs_data_results(mbs_data *d, const char *what, const mbs_result *r, int nr);

/* The same with the message in err. */
int mbs_error_results(mbs_error *err, const mbs_model *m, const char *what, const mbs_result *r, int nr);

/* The kinematics of (q, qd, qdd) held in d (positions to accelerations)
 * for the query functions of mbsens/kinematics.h and mbs_output_eval:
 * MBS_OK when every number they can return for the bodies, named points
 * and vectors and the energies is finite; otherwise MBS_ERR_NUMERIC naming
 * it in mbs_data_error(d). qd, qdd may be NULL (zero).
 * Fast test: q, qd and qdd (2-norm) and the model's numbers at most 1e15
 * in magnitude. The quantities the queries return are sums over the bodies
 * of products of at most about six such numbers and of sines and cosines
 * (positions: one, velocities: a rate times a lever arm, accelerations:
 * two rates times a lever arm, the kinetic energy: a mass times a squared
 * velocity), so they stay more than a hundred orders of magnitude below
 * overflow for any model of fewer than 1e10 bodies. Only beyond that are
 * the returned quantities themselves evaluated and looked at. */
int mbs_data_kinematics_results(mbs_data *d, const double *q, const double *qd, const double *qdd);

#endif
