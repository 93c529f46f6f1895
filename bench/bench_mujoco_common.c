/*
 * bench_mujoco_common.c - our model and its MuJoCo twin, for the MuJoCo
 * benchmarks (bench_mujoco_common.h).
 */
#include <stdio.h>
#include <string.h>

#include "bench_mujoco_common.h"

int mjpair_init(mjpair *P, mbs_model *m, const char *label)
{
    char err[1024] = "";
    memset(P, 0, sizeof *P);
    P->mm = mjb_load_mjcf(m, label, err, sizeof err);
    if (!P->mm) {
        fprintf(stderr, "MuJoCo cannot load the MJCF of %s: %s\n", label, err);
        return -1;
    }
    P->m = m;
    P->nq = m->nq;
    P->nv = P->mm->nv;
    if (mjb_map_init(&P->map, m, P->mm, label) != 0) return -1;
    if (P->mm->nbody != m->nb + 1) {
        fprintf(stderr, "%s: MuJoCo model has nbody = %d; expected %d\n", label, P->mm->nbody, m->nb + 1);
        return -1;
    }
    return 0;
}

void mjpair_free(mjpair *P)
{
    mj_deleteModel(P->mm);
    mjb_map_free(&P->map);
}
