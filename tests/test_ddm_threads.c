/*
 * test_ddm_threads.c - the DDM's parameter columns on 1, 2 and 3 threads
 * (mbs_sens_options.threads) give bit for bit the serial gradient, psi and
 * running sensitivities (the history callback's psi and gradient at every
 * output), for every formulation the DDM differentiates: the trapezoidal
 * rule of the semi-recursive formulation and the RK4 scheme of the fully
 * recursive one (open trees with every joint, force and parameter kind,
 * both reference points; also with a program's own objective, which then
 * runs on several threads), ALI3-P (penalty and iterative projections)
 * and Matrix R (the five-bar linkage, and the quarter car, whose spherical
 * joints add Euler parameters). Equality is exact (memcmp): every
 * column is computed as serially, from the same primal state; no
 * tolerance applies. Also: OpenBLAS on one thread while the columns run
 * and the caller's setting back afterwards, and a run inside a parallel
 * region (a batch) on its caller's thread.
 */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "sens_loops.h"
#include "testutil.h"

/* The running values at every output, appended. */
typedef struct trace {
    double *v;
    size_t n, cap;
    int blas_max;             /* the largest OpenBLAS thread count seen during the run */
} trace;

static int record(void *user, double t, int nobj, int nparam, const double *psi, const double *grad)
{
    trace *tr = user;
    size_t need = tr->n + 1 + (size_t)nobj * (1 + (size_t)nparam);
    if (need > tr->cap) {
        size_t cap = 2 * need + 64;
        double *v = realloc(tr->v, cap * sizeof *v);
        if (!v) return 1;
        tr->v = v;
        tr->cap = cap;
    }
    tr->v[tr->n++] = t;
    for (int k = 0; k < nobj; k++) tr->v[tr->n++] = psi[k];
    for (int k = 0; grad && k < nobj * nparam; k++) tr->v[tr->n++] = grad[k];
    int b = openblas_get_num_threads();
    if (b > tr->blas_max) tr->blas_max = b;
    return 0;
}

/* A program's objective reading the state and every parameter:
 * g = sum_i rho_i q_i^2 / (1 + i) + qd . qd (first parameters for the first coordinates). */
static int own_objective(void *user, double t, int nq, const double *q, const double *qd, const double *qdd,
                         int nparam, const double *rho, double *g, double *g_q, double *g_qd, double *g_qdd,
                         double *g_rho)
{
    (void)t, (void)qdd;
    int th = omp_get_thread_num(), *seen = user;
#pragma omp critical(test_ddm_threads_seen)
    if (th > *seen) *seen = th;
    *g = 0;
    if (g_rho)
        for (int j = 0; j < nparam; j++) g_rho[j] = 0;
    for (int i = 0; i < nq; i++) {
        double r = i < nparam ? rho[i] : 1;
        *g += r * q[i] * q[i] / (1 + i) + qd[i] * qd[i];
        if (g_q) {
            g_q[i] = 2 * r * q[i] / (1 + i);
            g_qd[i] = 2 * qd[i];
            g_qdd[i] = 0;
            if (i < nparam) g_rho[i] = q[i] * q[i] / (1 + i);
        }
    }
    return 0;
}

/* Runs o on 1, 2 and 3 threads: everything equal to the 1-thread run. */
static void check_threads(const mbs_model *m, mbs_sens_options o, const char *label)
{
    mbs_sens_result res[3];
    trace tr[3];
    memset(res, 0, sizeof res);
    memset(tr, 0, sizeof tr);
    mbs_error err = {0};
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        int seen = 0;
        o.threads = k + 1;
        o.history = record;
        o.history_user = &tr[k];
        o.objective_user = &seen;
        openblas_set_num_threads(2);
        int rc = mbs_sensitivity(m, &o, &res[k], &err);
        CHECK(rc == MBS_OK, "%s, %d threads: %s", label, k + 1, err.msg);
        if (o.objective)
            CHECK(seen == k, "%s, %d threads: the program's objective called from threads 0 to %d", label, k + 1,
                  seen);
        CHECK(openblas_get_num_threads() == 2, "%s, %d threads: OpenBLAS's setting restored (%d)", label, k + 1,
              openblas_get_num_threads());
        if (rc != MBS_OK) ok = 0;
    }
    openblas_set_num_threads(1);
    if (ok) {
        const size_t no = (size_t)res[0].nobj, np = (size_t)res[0].nparam;
        for (int k = 1; k < 3; k++) {
            int same = res[k].nobj == res[0].nobj && res[k].nparam == res[0].nparam
                       && !memcmp(res[k].psi, res[0].psi, no * sizeof(double))
                       && !memcmp(res[k].grad, res[0].grad, no * np * sizeof(double));
            int same_tr = tr[k].n == tr[0].n && tr[0].n > 0 && !memcmp(tr[k].v, tr[0].v, tr[0].n * sizeof(double));
            CHECK(same, "%s: psi and gradient on %d threads bit for bit those of 1", label, k + 1);
            CHECK(same_tr, "%s: the running sensitivities (%zu values) on %d threads bit for bit those of 1", label,
                  tr[0].n, k + 1);
            CHECK(tr[k].blas_max == 1, "%s, %d threads: OpenBLAS on one thread during the run (saw %d)", label,
                  k + 1, tr[k].blas_max);
        }
        int finite = 1;
        for (size_t i = 0; i < no * np; i++) finite = finite && isfinite(res[0].grad[i]);
        CHECK(finite, "%s: a finite gradient", label);
        printf("%s: %zu objectives x %zu parameters, %zu running values: bit for bit on 1, 2, 3 threads\n", label,
               no, np, tr[0].n);
    }
    for (int k = 0; k < 3; k++) {
        mbs_sens_result_free(&res[k]);
        free(tr[k].v);
    }
}

static void check_open_tree(void)
{
    mbs_error err = {0};
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/spring_tree.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    for (int ref = 0; ref < 2; ref++)
        for (int fr = 0; fr < 2; fr++) {
            mbs_sens_options o = mbs_sens_options_default(m);
            o.method = MBS_SENS_DDM;
            o.sim.tf = 0.1;
            o.sim.dt = 0.005;
            o.sim.ref = ref ? MBS_REF_ORIGIN : MBS_REF_COM;
            o.sim.formulation = fr ? MBS_FD_RECURSIVE : MBS_FD_SEMI_RECURSIVE;
            char label[96];
            snprintf(label, sizeof label, "spring_tree, %s, ref %s", fr ? "fr (rk4)" : "semi (trapezoidal)",
                     mbs_ref_point_name(o.sim.ref));
            check_threads(m, o, label);
            if (ref == 0) {
                o.objective = own_objective;
                snprintf(label, sizeof label, "spring_tree, %s, with a program's objective",
                         fr ? "fr (rk4)" : "semi (trapezoidal)");
                check_threads(m, o, label);
            }
        }
    mbs_model_free(m);
}

static void check_loops(void)
{
    mbs_error err = {0};
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    static const struct {
        mbs_loop_formulation loop;
        mbs_projection proj;
        const char *label;
    } cases[] = {
        { MBS_LOOP_ALI3P, MBS_PROJ_PENALTY, "fivebar, ali3p, penalty projections" },
        { MBS_LOOP_ALI3P, MBS_PROJ_ITERATIVE, "fivebar, ali3p, iterative projections" },
        { MBS_LOOP_MATRIXR, MBS_PROJ_PENALTY, "fivebar, matrixr" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.method = MBS_SENS_DDM;
        o.sim.tf = 0.1;
        o.sim.loop = cases[k].loop;
        o.sim.projection = cases[k].proj;
        check_threads(m, o, cases[k].label);
    }
    /* Euler parameters (a spherical joint): ALI3-P's velocity columns of the projected state */
    mbs_model *qc = mbs_test_load_sens_case("quarter_car");
    if (qc) {
        mbs_sens_options oq = mbs_sens_options_default(qc);
        oq.method = MBS_SENS_DDM;
        oq.sim.tf = 0.05;
        oq.sim.loop = MBS_LOOP_ALI3P;
        check_threads(qc, oq, "quarter car (Euler parameters), ali3p");
        oq.sim.loop = MBS_LOOP_MATRIXR;
        check_threads(qc, oq, "quarter car (Euler parameters), matrixr");
        mbs_model_free(qc);
    }
    /* inside a parallel region (a batch's thread): one thread, the BLAS setting left alone */
    mbs_sens_options o = mbs_sens_options_default(m);
    o.sim.tf = 0.02;
    o.threads = 2;
    mbs_sens_result a = {0}, b = {0};
    int ra = mbs_sensitivity(m, &o, &a, &err), rb = MBS_ERR_ARG, blas = 0;
    openblas_set_num_threads(1);
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        rb = mbs_sensitivity(m, &o, &b, NULL);
        blas = openblas_get_num_threads();
    }
    CHECK(ra == MBS_OK && rb == MBS_OK && !memcmp(a.grad, b.grad, sizeof(double) * (size_t)(a.nobj * a.nparam)),
          "fivebar ddm inside a parallel region: the same gradient (%d, %d)", ra, rb);
    CHECK(blas == 1, "inside a parallel region: OpenBLAS's setting untouched (%d)", blas);
    mbs_sens_result_free(&a);
    mbs_sens_result_free(&b);
    mbs_model_free(m);
}

int main(void)
{
    openblas_set_num_threads(1);
    check_open_tree();
    check_loops();
    return mbs_test_summary("test_ddm_threads");
}
