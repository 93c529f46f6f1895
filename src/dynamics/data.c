/*
 * data.c - mbs_data: create and free (every workspace), time, reference
 * point, frames of the joint reactions, user loads, the error message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "base/algebra.h"
#include "base/error.h"
#include "forces/force.h"
#include "constraints/kinematic_problems.h"
#include "kernels/jacobians_1dof.h"
#include "dynamics/derivatives_sparse.h"
#include "dynamics/scribble.h"
#include "kernels/results.h"

mbs_data *mbs_data_create(const mbs_model *m, mbs_error *err)
{
    if (!m) { mbs_error_set(err, MBS_ERR_ARG, "mbs_data_create: model is NULL"); return NULL; }
    mbs_data *d = calloc(1, sizeof *d);
    if (!d) { mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    d->model = m;
    d->nv = m->nv;
    /* everything is allocated here, once; mbs_data_free copes with a
     * partially built data */
    const size_t nv = (size_t)(m->nv > 0 ? m->nv : 1);
    int ok = mbs_ws_init(&d->ws, m) == 0;
    ok = (mbs_ws_init(&d->dws, m) == 0) && ok;
    d->scratch = calloc(nv * nv + 4 * nv, sizeof(double));
    d->xload = calloc(15 * (size_t)(m->nb + 1), sizeof(double));
    d->qload = calloc(nv, sizeof(double));
    d->dx = calloc((size_t)m->nx + 1, sizeof(double));
    d->dbuf = calloc(6 * nv, sizeof(double));
    d->jacs = calloc(MBS_COM_SUB * ((size_t)m->nb + 1), sizeof(double));
    ok = ok && d->scratch && d->xload && d->qload && d->dx && d->dbuf && d->jacs && mbs_con_ws_create(d, m) == 0;
    ok = ok && mbs_abajf_create(d, m) == 0;
    ok = ok && mbs_jac1_create(d, m) == 0;
    ok = ok && mbs_dsparse_create(d, m) == 0;
    d->x_moderate = 1;
    for (int k = 0; k < m->nx; k++)
        if (!(fabs(m->x[k]) <= 1e15)) d->x_moderate = 0;
    if (!ok) {
        mbs_data_free(d);
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return d;
}

void mbs_data_free(mbs_data *d)
{
    if (!d) return;
    mbs_ws_free(&d->ws);
    mbs_ws_free(&d->dws);
    mbs_con_ws_free(d);
    mbs_abajf_free(d);
    mbs_jac1_free(d);
    mbs_dsparse_free(d);
    free(d->dx);
    free(d->dbuf);
    free(d->jacs);
    free(d->scratch);
    free(d->xload);
    free(d->qload);
    free(d);
}

void mbs_data_scribble(mbs_data *d, uint64_t seed)
{
    const mbs_model *m = d->model;
    const size_t nv = (size_t)(m->nv > 0 ? m->nv : 1), z = sizeof(double);
    uint64_t s = seed * 2685821657736338717ULL + 1442695040888963407ULL;
    if (!s) s = 1;
    mbs_ws_scribble(&d->ws, m, 0, &s);
    mbs_ws_scribble(&d->dws, m, 1, &s);   /* a tangent's ground entries are never read */
    mbs_scribble_bytes(d->dx, z * ((size_t)m->nx + 1), &s);
    mbs_scribble_bytes(d->dbuf, z * 6 * nv, &s);
    mbs_scribble_bytes(d->jacs, z * MBS_COM_SUB * ((size_t)m->nb + 1), &s);
    mbs_scribble_bytes(d->scratch, z * (nv * nv + 4 * nv), &s);
    mbs_con_ws_scribble(d, &s);
    mbs_abajf_scribble(d, &s);
    mbs_jac1_scribble(d, &s);
    mbs_dsparse_scribble(d, &s);
    snprintf(d->err, sizeof d->err, "(scribbled)");
}

void mbs_data_set_time(mbs_data *d, double t) { d->time = t; }
double mbs_data_time(const mbs_data *d) { return d->time; }

void mbs_data_prepare_loads(const mbs_model *m, mbs_data *d, const double *q, const double *qd)
{
    memcpy(d->ws.xfrc, d->xload, sizeof(double) * 15 * (size_t)(m->nb + 1));
    memcpy(d->ws.qfrc, d->qload, sizeof(double) * (size_t)m->nv);
    mbs_forces_apply(m, m->x, &d->ws, q, qd, d->time);   /* force elements */
}

void mbs_data_set_ref(mbs_data *d, mbs_ref_point ref) { d->ws.ref = ref; d->dws.ref = ref; }
mbs_ref_point mbs_data_ref(const mbs_data *d) { return d->ws.ref; }

void mbs_data_set_fr_frames(mbs_data *d, mbs_fr_frames frames) { d->fr_global = frames == MBS_FR_GLOBAL; }
mbs_fr_frames mbs_data_fr_frames(const mbs_data *d) { return d->fr_global ? MBS_FR_GLOBAL : MBS_FR_JOINT_FRAMES; }

const char *mbs_ref_point_name(mbs_ref_point ref)
{
    switch (ref) {
    case MBS_REF_COM: return "com";
    case MBS_REF_ORIGIN: return "origin";
    case MBS_REF_JOINT: return "joint";
    }
    return "?";
}

int mbs_ref_point_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "com")) return MBS_REF_COM;
    if (!strcmp(name, "origin")) return MBS_REF_ORIGIN;
    if (!strcmp(name, "joint")) return MBS_REF_JOINT;
    return -1;
}

const char *mbs_data_error(const mbs_data *d) { return d->err; }

void mbs_data_clear_loads(mbs_data *d)
{
    memset(d->xload, 0, sizeof(double) * 15 * (size_t)(d->ws.nb + 1));
    memset(d->qload, 0, sizeof(double) * (size_t)d->ws.nv);
    d->has_body_load = 0;
}

int mbs_data_add_body_load(mbs_data *d, int body, const double point[3],
                           const double f[3], const double n[3])
{
    const mbs_model *m = d->model;
    if (body < 1 || body > m->nb)
        return mbs_data_fail(d, MBS_ERR_ARG, "body load: body index %d out of range 1..%d", body, m->nb);
    double *L = d->xload + 15 * body;
    const double *c = m->x + m->body[body].x_com;
    d->has_body_load = 1;
    for (int k = 0; k < 3; k++) {
        if ((f && !isfinite(f[k])) || (n && !isfinite(n[k])) || (point && !isfinite(point[k])))
            return mbs_data_fail(d, MBS_ERR_ARG, "body load on '%s': non-finite value", m->body[body].name);
    }
    if (f) {
        const double *p = point ? point : c;
        for (int k = 0; k < 3; k++) L[k] += f[k];
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) L[6 + 3 * r + s] += p[r] * f[s];
    }
    if (n)
        for (int k = 0; k < 3; k++) L[3 + k] += n[k];
    return MBS_OK;
}

double *mbs_data_joint_load(mbs_data *d) { return d->qload; }
