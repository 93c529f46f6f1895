/*
 * outputs.c - the model's requested outputs ("outputs" section,
 * docs/model-format.md): point positions, velocities, accelerations,
 * energies and body poses, evaluated from the kinematics held in an
 * mbs_data; coordinate forces from inverse dynamics at a state.
 */
#include <math.h>
#include <stdio.h>

#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "model/model_impl.h"
#include "dynamics/derivatives.h"
#include "kernels/results.h"

int mbs_model_noutputs(const mbs_model *m) { return m ? m->sim.noutput : 0; }

mbs_output mbs_model_output(const mbs_model *m, int k)
{
    mbs_output o = { MBS_OUTPUT_ENERGY, -1, -1, 0, { -1, -1, -1 } };
    if (m && k >= 0 && k < m->sim.noutput) o = m->sim.output[k];
    return o;
}

int mbs_output_ncolumns(const mbs_output *o)
{
    if (o->kind == MBS_OUTPUT_FORCE) return o->ncoord;
    return o->kind == MBS_OUTPUT_ENERGY ? 4 : o->kind == MBS_OUTPUT_POSE ? 7 : 3;
}

int mbs_output_column_name(const mbs_model *m, const mbs_output *o, int c, char *buf, size_t len)
{
    static const char *const xyz[3][3] = { { "x", "y", "z" }, { "vx", "vy", "vz" }, { "ax", "ay", "az" } };
    static const char *const energy[4] = { "kinetic_energy", "potential_energy", "elastic_energy", "energy" };
    if (c < 0 || c >= mbs_output_ncolumns(o)) return snprintf(buf, len, "?");
    static const char *const pose[7] = { "x", "y", "z", "qw", "qx", "qy", "qz" };
    if (o->kind == MBS_OUTPUT_ENERGY) return snprintf(buf, len, "%s", energy[c]);
    if (o->kind == MBS_OUTPUT_FORCE)
        return snprintf(buf, len, "%s.force", o->coord[c] >= 0 && o->coord[c] < m->nv ? m->coord_name[o->coord[c]] : "?");
    if (o->kind == MBS_OUTPUT_POSE)
        return snprintf(buf, len, "%s.%s", o->body >= 0 && o->body <= m->nb ? m->body[o->body].name : "?", pose[c]);
    const char *name = (o->point >= 0 && o->point < m->npoint) ? m->point[o->point].name : "?";
    return snprintf(buf, len, "%s.%s", name, xyz[o->kind][c]);
}

int mbs_output_eval(const mbs_model *m, const mbs_data *d, const double *q, const mbs_output *o, double *v)
{
    if (!m || !d || !o || !v) return MBS_ERR_ARG;
    const int point_ok = o->point >= 0 && o->point < m->npoint;
    switch (o->kind) {
    case MBS_OUTPUT_POSITION:
        if (!point_ok) return MBS_ERR_ARG;
        mbs_point_kinematics(m, d, o->point, v, NULL, NULL);
        return MBS_OK;
    case MBS_OUTPUT_VELOCITY:
        if (!point_ok) return MBS_ERR_ARG;
        mbs_point_kinematics(m, d, o->point, NULL, v, NULL);
        return MBS_OK;
    case MBS_OUTPUT_ACCELERATION:
        if (!point_ok) return MBS_ERR_ARG;
        mbs_point_kinematics(m, d, o->point, NULL, NULL, v);
        return MBS_OK;
    case MBS_OUTPUT_ENERGY:
        if (!q && m->nq > 0) return MBS_ERR_ARG;
        v[0] = mbs_kinetic_energy(m, d);
        v[1] = mbs_potential_energy(m, d);
        v[2] = mbs_elastic_energy(m, d, q);
        v[3] = v[0] + v[1] + v[2];
        return MBS_OK;
    case MBS_OUTPUT_POSE: {
        if (o->body < 0 || o->body > m->nb) return MBS_ERR_ARG;
        double A[9];
        mbs_body_pose(d, o->body, A, v);
        mbs_rotation_quaternion(A, v + 3);
        return MBS_OK;
    }
    case MBS_OUTPUT_FORCE:   /* needs qd, qdd and the loads at t: mbs_output_eval_state */
        break;
    }
    return MBS_ERR_ARG;
}

int mbs_output_eval_state(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                          const double *qdd, const mbs_output *o, double *v)
{
    if (!m || !d || !q || !qd || !qdd || !o || !v) return MBS_ERR_ARG;
    mbs_data_set_time(d, t);
    if (o->kind != MBS_OUTPUT_FORCE) {
        mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
        mbs_output_eval(m, d, q, o, v);
        return MBS_OK;
    }
    if (o->ncoord < 1 || o->ncoord > 3) return MBS_ERR_ARG;
    for (int c = 0; c < o->ncoord; c++)
        if (o->coord[c] < 0 || o->coord[c] >= m->nv) return MBS_ERR_ARG;
    mbs_deriv_id_primal(m, d, q, qd, qdd, d->dbuf);
    for (int c = 0; c < o->ncoord; c++) v[c] = d->dbuf[o->coord[c]];
    return mbs_data_results(d, "output", MBS_RESULTS({ "coordinate force", d->dbuf, m->nv, 1, MBS_IX_COORD, 0 }));
}
