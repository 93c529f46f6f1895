/*
 * bench_mujoco_common.h - what the MuJoCo benchmarks share: our model and
 * its MuJoCo twin (the MJCF written by mjbridge, the joint map), and the
 * masses given to massless bodies, which MuJoCo 2.2.2 rejects ("mass and
 * inertia of moving bodies must be larger than mjMINVAL"), on both sides.
 */
#ifndef MBS_BENCH_MUJOCO_COMMON_H
#define MBS_BENCH_MUJOCO_COMMON_H

#include "mjbridge.h"

#define EPS_MASS 1e-12      /* kg */
#define EPS_INERTIA 1e-14   /* kg m^2 */

typedef struct mjpair {
    mbs_model *m;          /* our model (massless bodies filled) */
    mjModel *mm;
    mjb_map map;
    int nq, nv;
} mjpair;

/* Loads the MJCF of m into MuJoCo (label names the model in messages and
 * in MBS_BENCH_MJCF_DIR) and builds the joint map; 0, or -1 with a message
 * on stderr. */
int mjpair_init(mjpair *P, mbs_model *m, const char *label);
void mjpair_free(mjpair *P);

#endif
