/*
 * kinematics_results.c - mbs_data_kinematics_results: whether everything
 * the queries of mbsens/kinematics.h return for the kinematics held in an
 * mbs_data is finite (results.h).
 */
#include <math.h>

#include "mbsens/mbsens.h"
#include "kernels/results.h"
#include "kernels/data.h"
#include "model/model_impl.h"

static double sum_squares(const double *x, size_t n)
{
    double s[4] = { 0 };
    size_t k = 0;
    for (; k + 3 < n; k += 4)
        for (int j = 0; j < 4; j++) s[j] += x[k + j] * x[k + j];
    for (; k < n; k++) s[0] += x[k] * x[k];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static int vec_finite(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

static const char *const level[3] = { "position", "velocity", "acceleration" };

/* The position, velocity and acceleration of a named point or vector. */
static int named_finite(mbs_data *d, const char *kind, const char *name, double v[3][3])
{
    for (int l = 0; l < 3; l++)
        if (!vec_finite(v[l], 3))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "kinematics: %s of %s '%s' is not finite", level[l], kind, name);
    return MBS_OK;
}

/* What the queries return for every body, named point and vector, and the
 * energies: the first that is not finite, named in d's message. */
static int kinematics_exact(mbs_data *d, const double *q)
{
    const mbs_model *m = d->model;
    double v[3][3], w[2][3], A[9], c[3];
    for (int i = 1; i <= m->nb; i++) {
        mbs_body_pose(d, i, A, v[0]);
        mbs_body_com(d, i, c);
        mbs_body_velocity(d, i, v[1], w[0]);
        mbs_body_acceleration(d, i, v[2], w[1]);
        const int ok[3] = { vec_finite(A, 9) && vec_finite(v[0], 3) && vec_finite(c, 3),
                            vec_finite(v[1], 3) && vec_finite(w[0], 3), vec_finite(v[2], 3) && vec_finite(w[1], 3) };
        for (int l = 0; l < 3; l++)
            if (!ok[l])
                return mbs_data_fail(d, MBS_ERR_NUMERIC, "kinematics: %s of body '%s' is not finite",
                                     level[l], m->body[i].name);
    }
    int rc;
    for (int k = 0; k < m->npoint; k++) {
        mbs_point_kinematics(m, d, k, v[0], v[1], v[2]);
        if ((rc = named_finite(d, "point", mbs_point_name(m, k), v))) return rc;
    }
    for (int k = 0; k < m->nvector; k++) {
        mbs_vector_kinematics(m, d, k, v[0], v[1], v[2]);
        if ((rc = named_finite(d, "vector", mbs_vector_name(m, k), v))) return rc;
    }
    double e[4] = { mbs_kinetic_energy(m, d), mbs_potential_energy(m, d), mbs_elastic_energy(m, d, q), 0 };
    e[3] = e[0] + e[1] + e[2];   /* mbs_output_eval's "energy" */
    static const char *const ename[4] = { "kinetic", "potential", "elastic", "total" };
    for (int k = 0; k < 4; k++)
        if (!isfinite(e[k]))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "kinematics: the %s energy is not finite (%g)", ename[k], e[k]);
    return MBS_OK;
}

int mbs_data_kinematics_results(mbs_data *d, const double *q, const double *qd, const double *qdd)
{
    const mbs_model *m = d->model;
    const double s = sum_squares(q, (size_t)m->nq) + (qd ? sum_squares(qd, (size_t)m->nv) : 0) +
                     (qdd ? sum_squares(qdd, (size_t)m->nv) : 0);
    if (s <= 1e30 && d->x_moderate) return MBS_OK;
    return kinematics_exact(d, q);
}
