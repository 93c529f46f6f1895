/*
 * loops_kinematic_init.c - sens_loops_kinematic_init: the parameter
 * sensitivities of the initial state of a closed-loop model, shared by the
 * closed-loop methods (ddm_ali3p.c, the step linearizations of ALI3-P and
 * Matrix R, the continuous adjoint of the loops).
 *
 * The initial state is the assembly with the model's fixed coordinates
 * B (held) and the velocity problem:
 *   [Phi_q; B] z0'  = [-dPhi(0, 0, 0, dx); 0]
 *   [Phi_q; B] zd0' = [-dPhid(z0', 0, 0, dx); 0]                (zd fixed)
 * (least squares, minimum norm, as the kinematic problems). When
 * [Phi_q; B] has a null space (too few fixed coordinates) zd0' also takes
 * the turn of that null space, (I - A+ A) A'^T y with A^T y = zd0
 * (null_space_turn below).
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "../formulations/form_impl.h"

/* Minimum-norm least-squares solve of [Phi (nc rows); B (fixed coordinates)] X = RHS
 * for nrhs columns (RHS: (nc + nf) x nrhs col-major, X out n x nrhs). Once per run. */
static int lsq_stacked(const mbs_model *m, int n, int nc, const double *Phi, const double *RHS, int nrhs,
                       double *X)
{
    const int nf = m->con.nfixed, rows = nc + nf, ldb = rows > n ? rows : n;
    if (n == 0 || nrhs == 0) return MBS_OK;
    double *A = calloc((size_t)rows * (size_t)n + 1, sizeof(double));
    double *B = calloc((size_t)ldb * (size_t)nrhs + 1, sizeof(double));
    double *s = calloc((size_t)n + 1, sizeof(double));
    int rc = MBS_OK;
    if (!A || !B || !s) {
        rc = MBS_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int r = 0; r < nc; r++) A[(size_t)j * rows + r] = Phi[(size_t)r * n + j];
        for (int i = 0; i < nf; i++) A[(size_t)j * rows + nc + i] = m->con.fixed[i] == j ? 1 : 0;
    }
    for (int c = 0; c < nrhs; c++)
        for (int r = 0; r < rows; r++) B[(size_t)c * ldb + r] = RHS[(size_t)c * rows + r];
    lapack_int rank = 0;
    if (rows > 0 && LAPACKE_dgelsd(LAPACK_COL_MAJOR, rows, n, nrhs, A, rows, B, ldb, s, 1e-11, &rank) != 0) {
        rc = MBS_ERR_NUMERIC;
        goto done;
    }
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < n; i++) X[(size_t)c * n + i] = rows > 0 ? B[(size_t)c * ldb + i] : 0;
done:
    free(A);
    free(B);
    free(s);
    return rc;
}

/* ---------------------------------------------------------------- t0 */

/* The velocity problem's solution is the minimum-norm one, zd = A+ c with
 * A = [Phi_q; B]. When A has a null space (no or too few fixed coordinates
 * for the mobility) that null space turns with A, and the derivative of
 * A+ c (c consistent) is
 *     zd' = A+ (c' - A' zd) + (I - A+ A) A'^T y,   y = A+^T zd  (A^T y = zd)
 * with A' = [dPhi_q; 0] along (z', dx). The first part is the least-squares
 * solve above; this adds the second to Zd (nothing when A has full column
 * rank: the term vanishes). */
static int null_space_turn(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                           const double *Phi, const double *Z, double *Zd)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = r->np, nf = m->con.nfixed, rows = nc + nf;
    const int ld = rows > n ? rows : n;
    double *At = calloc((size_t)n * (size_t)rows + 1, sizeof(double)), *y = calloc((size_t)ld + 1, sizeof(double));
    double *s = calloc((size_t)ld + 1, sizeof(double)), *dPhi = calloc((size_t)nc * (size_t)n + 1, sizeof(double));
    double *dx = calloc((size_t)m->nx + 1, sizeof(double)), *V = calloc((size_t)n * (size_t)np + 1, sizeof(double));
    double *W = calloc((size_t)rows * (size_t)np + 1, sizeof(double)), *U = calloc((size_t)n * (size_t)np + 1, sizeof(double));
    int rc = MBS_OK;
    if (!At || !y || !s || !dPhi || !dx || !V || !W || !U) {
        rc = MBS_ERR_NOMEM;
        goto done;
    }
    /* y: minimum-norm solution of A^T y = zd (A^T: n x rows, column-major) */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nc; k++) At[(size_t)k * n + i] = Phi[(size_t)k * n + i];
        for (int k = 0; k < nf; k++) At[(size_t)(nc + k) * n + i] = m->con.fixed[k] == i ? 1 : 0;
        y[i] = zd[i];
    }
    lapack_int rank = 0;
    if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, n, rows, 1, At, n, y, ld, s, 1e-11, &rank) != 0) {
        rc = MBS_ERR_NUMERIC;
        goto done;
    }
    if (rank >= n) goto done;   /* A has full column rank: no null space */
    /* V_j = dPhi_q(z'_j, dx_j)^T y_Phi; W_j = A V_j; U_j = A+ W_j; Zd_j += V_j - U_j */
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, Z + (size_t)j * n, NULL, NULL, dx, NULL, NULL, dPhi, NULL, NULL);
        double *v = V + (size_t)j * n, *w = W + (size_t)j * rows;
        for (int k = 0; k < nc; k++)
            for (int i = 0; i < n; i++) v[i] += dPhi[(size_t)k * n + i] * y[k];
        for (int k = 0; k < nc; k++) {
            double a = 0;
            for (int i = 0; i < n; i++) a += Phi[(size_t)k * n + i] * v[i];
            w[k] = a;
        }
        for (int k = 0; k < nf; k++) w[nc + k] = v[m->con.fixed[k]];
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, W, np, U))) goto done;
    for (size_t k = 0; k < (size_t)n * (size_t)np; k++) Zd[k] += V[k] - U[k];
done:
    free(At);
    free(y);
    free(s);
    free(dPhi);
    free(dx);
    free(V);
    free(W);
    free(U);
    return rc;
}

int sens_loops_kinematic_init(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                              double *Z, double *Zd, mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = r->np, nf = m->con.nfixed, rows = nc + nf;
    memset(Z, 0, sizeof(double) * (size_t)n * (size_t)np);
    memset(Zd, 0, sizeof(double) * (size_t)n * (size_t)np);
    if (m->con.ncut + m->con.ndriver == 0 || np == 0) return MBS_OK;   /* open tree: the state is given */
    double *RHS = calloc((size_t)rows * (size_t)np + 1, sizeof(double));
    double *Phi = calloc((size_t)nc * (size_t)n + 1, sizeof(double)), *dx = calloc((size_t)m->nx + 1, sizeof(double));
    double *v = calloc((size_t)nc + 1, sizeof(double));
    int rc = MBS_OK;
    if (!RHS || !Phi || !dx || !v) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    mbs_data_set_time(d, t);
    /* positions: [Phi_q; B] z' = [-dPhi(dx); 0] (the assembly held the fixed coordinates) */
    mbs_form_primal(m, d, t, z, zd, zdd, NULL, NULL, Phi, NULL, NULL);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, NULL, NULL, NULL, dx, NULL, v, NULL, NULL, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Z))) goto fail;
    /* velocities: [Phi_q; B] zd' = [-dPhid(z', 0, 0, dx) (zd fixed); 0] */
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, Z + (size_t)j * n, NULL, NULL, dx, NULL, NULL, NULL, v, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
        for (int i = 0; i < nf; i++) RHS[(size_t)j * rows + nc + i] = 0;
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Zd))) goto fail;
    if ((rc = null_space_turn(r, t, z, zd, zdd, Phi, Z, Zd))) goto fail;
    goto done;
fail:
    mbs_error_set(err, rc, "sensitivity at t = %.9g: initial kinematic sensitivities (least squares)", t);
done:
    free(RHS);
    free(Phi);
    free(dx);
    free(v);
    return rc;
}
