/*
 * jacobians.c - the public frame and point Jacobians, J-dot v, centre of
 * mass, its Jacobian and the centroidal momentum (mbsens/jacobians.h):
 * argument checks, then the kernels of src/kernels/jacobians.c on the
 * kinematics in d->ws; the subtree sums and accelerations at zero vd go to
 * d->jacs, the point Jacobian's six rows to d->dbuf.
 */
#include <math.h>

#include "mbsens/mbsens.h"
#include "kernels/data.h"

static int check_frame(const mbs_model *m, mbs_data *d, const char *fn, int body, const double *point, int axes,
                       const void *out)
{
    if (!out) return mbs_data_fail(d, MBS_ERR_ARG, "%s: the output is NULL", fn);
    if (body < 0 || body > m->nb)
        return mbs_data_fail(d, MBS_ERR_ARG, "%s: body index %d out of range 0..%d", fn, body, m->nb);
    if (axes != MBS_AXES_WORLD && axes != MBS_AXES_LOCAL)
        return mbs_data_fail(d, MBS_ERR_ARG, "%s: axes %d is neither MBS_AXES_WORLD nor MBS_AXES_LOCAL", fn, axes);
    for (int k = 0; point && k < 3; k++)
        if (!isfinite(point[k]))
            return mbs_data_fail(d, MBS_ERR_ARG, "%s: point coordinate %d is not finite", fn, k);
    return MBS_OK;
}

int mbs_frame_jacobian(const mbs_model *m, mbs_data *d, int body, const double point[3], mbs_axes axes,
                       double *J)
{
    int rc = check_frame(m, d, "mbs_frame_jacobian", body, point, (int)axes, J);
    if (rc) return rc;
    mbs_frame_jac(m, &d->ws, body, point, axes == MBS_AXES_LOCAL, J);
    return MBS_OK;
}

int mbs_point_jacobian(const mbs_model *m, mbs_data *d, int point, double *Jp)
{
    if (!Jp) return mbs_data_fail(d, MBS_ERR_ARG, "mbs_point_jacobian: the output is NULL");
    if (point < 0 || point >= m->npoint)
        return mbs_data_fail(d, MBS_ERR_ARG, "mbs_point_jacobian: point index %d out of range 0..%d", point,
                             m->npoint - 1);
    const mbs_point_info *p = &m->point[point];
    /* the linear rows of the frame Jacobian at the point: J's first three rows */
    mbs_frame_jac(m, &d->ws, p->body, m->x + p->x, 0, d->dbuf);
    for (int k = 0; k < 3 * m->nv; k++) Jp[k] = d->dbuf[k];
    return MBS_OK;
}

int mbs_frame_jacobian_dot_v(const mbs_model *m, mbs_data *d, int body, const double point[3], mbs_axes axes,
                             double Jdv[6])
{
    int rc = check_frame(m, d, "mbs_frame_jacobian_dot_v", body, point, (int)axes, Jdv);
    if (rc) return rc;
    mbs_frame_jac_dot_v(m, &d->ws, body, point, axes == MBS_AXES_LOCAL, Jdv);
    return MBS_OK;
}

/* The total mass (positive, else an error) and r_G. */
static int com_of(const mbs_model *m, mbs_data *d, const char *fn, double *mt, double rG[3], double vG[3],
                  double aG[3])
{
    *mt = mbs_com_kin(m, m->x, &d->ws, rG, vG, aG);
    if (!(*mt > 0))
        return mbs_data_fail(d, MBS_ERR_MODEL, "%s: the total mass of the model is %g: no centre of mass", fn, *mt);
    return MBS_OK;
}

int mbs_com(const mbs_model *m, mbs_data *d, double rG[3], double vG[3], double aG[3])
{
    double mt;
    return com_of(m, d, "mbs_com", &mt, rG, vG, aG);
}

/* A_G and J_G (either NULL) through the subtree sums in d->jacs. */
static int centroidal_columns(const mbs_model *m, mbs_data *d, const char *fn, double *AG, double *JG)
{
    if (!AG && !JG) return mbs_data_fail(d, MBS_ERR_ARG, "%s: the output is NULL", fn);
    double mt, rG[3];
    int rc = com_of(m, d, fn, &mt, rG, NULL, NULL);
    if (rc) return rc;
    mbs_com_subtrees(m, m->x, &d->ws, rG, d->jacs);
    for (int k = 0; k < (AG ? 6 : 3) * m->nv; k++) (AG ? AG : JG)[k] = 0;
    mbs_centroidal_columns(m, &d->ws, rG, mt, d->jacs, AG, JG);
    return MBS_OK;
}

int mbs_com_jacobian(const mbs_model *m, mbs_data *d, double *JG)
{
    return centroidal_columns(m, d, "mbs_com_jacobian", NULL, JG);
}

int mbs_centroidal_momentum_matrix(const mbs_model *m, mbs_data *d, double *AG)
{
    return centroidal_columns(m, d, "mbs_centroidal_momentum_matrix", AG, NULL);
}

int mbs_centroidal_momentum(const mbs_model *m, mbs_data *d, double hG[6])
{
    if (!hG) return mbs_data_fail(d, MBS_ERR_ARG, "mbs_centroidal_momentum: the output is NULL");
    double mt, rG[3];
    int rc = com_of(m, d, "mbs_centroidal_momentum", &mt, rG, NULL, NULL);
    if (rc) return rc;
    mbs_centroidal_momentum_k(m, m->x, &d->ws, rG, hG);
    return MBS_OK;
}

int mbs_centroidal_momentum_dot_v(const mbs_model *m, mbs_data *d, double AGdv[6])
{
    if (!AGdv) return mbs_data_fail(d, MBS_ERR_ARG, "mbs_centroidal_momentum_dot_v: the output is NULL");
    double mt, rG[3];
    int rc = com_of(m, d, "mbs_centroidal_momentum_dot_v", &mt, rG, NULL, NULL);
    if (rc) return rc;
    mbs_centroidal_momentum_dot_v_k(m, m->x, &d->ws, rG, d->jacs, AGdv);
    return MBS_OK;
}
