/*
 * kinematics.c - mbs_kinematics (the recursive kinematics into an
 * mbs_data) and the queries of mbsens/kinematics.h that read it: body
 * poses, centres of mass, velocities, accelerations, points and vectors.
 */
#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "base/algebra.h"
#include "kernels/results.h"

int mbs_kinematics(const mbs_model *m, mbs_data *d, const double *q,
                   const double *qd, const double *qdd)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    d->err[0] = 0;
    return mbs_data_kinematics_results(d, q, qd, qdd);
}

static void ref_to_point(const mbs_data *d, int body, const double *rP,
                         double *v, double *a)
{
    const double *V = d->ws.V + 6 * body, *Vd = d->ws.Vd + 6 * body, *ri = d->ws.r + 3 * body;
    double s[3], t[3], u[3];
    v3_sub(s, rP, ri);
    if (v) {
        v3_cross(t, V + 3, s);
        v3_add(v, V, t);
    }
    if (a) {
        v3_cross(t, Vd + 3, s);
        v3_cross(u, V + 3, s);
        v3_cross_add(t, V + 3, u);
        v3_add(a, Vd, t);
    }
}

void mbs_body_pose(const mbs_data *d, int body, double A[9], double origin[3])
{
    if (A) m3_copy(A, d->ws.A + 9 * body);
    if (origin) v3_copy(origin, d->ws.o + 3 * body);
}

void mbs_body_com(const mbs_data *d, int body, double r[3]) { v3_copy(r, d->ws.rG + 3 * body); }

void mbs_body_velocity(const mbs_data *d, int body, double v[3], double w[3])
{
    ref_to_point(d, body, d->ws.rG + 3 * body, v, NULL);
    if (w) v3_copy(w, d->ws.V + 6 * body + 3);
}

void mbs_body_acceleration(const mbs_data *d, int body, double a[3], double alpha[3])
{
    ref_to_point(d, body, d->ws.rG + 3 * body, NULL, a);
    if (alpha) v3_copy(alpha, d->ws.Vd + 6 * body + 3);
}

void mbs_body_point(const mbs_data *d, int body, const double local[3],
                    double r[3], double v[3], double a[3])
{
    double rP[3];
    m3_mv(rP, d->ws.A + 9 * body, local);
    v3_add(rP, rP, d->ws.o + 3 * body);
    if (r) v3_copy(r, rP);
    ref_to_point(d, body, rP, v, a);
}

void mbs_point_kinematics(const mbs_model *m, const mbs_data *d, int point,
                          double r[3], double v[3], double a[3])
{
    const mbs_point_info *p = &m->point[point];
    mbs_body_point(d, p->body, m->x + p->x, r, v, a);
}

void mbs_vector_kinematics(const mbs_model *m, const mbs_data *d, int vec,
                           double u[3], double ud[3], double udd[3])
{
    const mbs_vector_info *p = &m->vector[vec];
    const double *V = d->ws.V + 6 * p->body, *Vd = d->ws.Vd + 6 * p->body;
    double g[3], t[3];
    m3_mv(g, d->ws.A + 9 * p->body, m->x + p->x);
    if (u) v3_copy(u, g);
    if (ud) v3_cross(ud, V + 3, g);
    if (udd) {
        v3_cross(t, V + 3, g);
        v3_cross(udd, V + 3, t);
        v3_cross_add(udd, Vd + 3, g);
    }
}
