/*
 * test_derivatives.c - analytical derivatives of inverse and forward
 * dynamics against complex-step derivatives (the kernels compiled with a
 * complex scalar), on 200 random trees covering every joint type and every
 * parameter kind (mass, CoM, inertia entry, gravity, joint points, a
 * parameter with two targets), with body and joint loads, for the three
 * reference points; fully recursive vs semi-recursive; directional
 * derivatives vs Jacobian products. Relative errors within round-off:
 * MBS_ROUNDOFF of the tree for inverse dynamics, plus 2 n eps kappa(M) for
 * what solves with the mass matrix (forward dynamics).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/derivatives.h"


#define NTREES 200
static const double H = 1e-30;

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *qdd, *tau, *out;
    double *xload, *qload;   /* the user loads in the library's layout */
} cs_ctx;

/* loads as the library applies them (user loads only) */
static void cs_loads(cs_ctx *c)
{
    for (int k = 0; k < 15 * (c->m->nb + 1); k++) c->w.xfrc[k] = c->xload[k];
    for (int k = 0; k < c->m->nq; k++) c->w.qfrc[k] = c->qload[k];
}

static void cs_id(cs_ctx *c)
{
    mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, c->qdd, 2);
    cs_loads(c);
    mbs_body_terms_cs(c->m, c->x, &c->w);
    mbs_rnea_cs(c->m, &c->w, c->out);
}

static void cs_fd(cs_ctx *c)
{
    mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, NULL, 1);
    cs_loads(c);
    mbs_body_terms_cs(c->m, c->x, &c->w);
    mbs_aba_cs(c->m, &c->w, c->q, c->qd, c->tau, c->out);
}

static double g_worst[8];
static const char *g_names[8] = { "dtau/dq", "dtau/dqd", "dtau/drho", "dqdd/dq", "dqdd/dqd",
                                  "dqdd/dtau", "dqdd/drho", "fr vs semi" };

/* the worst error as a fraction of its round-off bound */
static void record(int which, const double *a, const double *ref, int n, double bound)
{
    double e = mbs_rel_err(a, ref, n) / bound;
    if (!(e <= g_worst[which])) g_worst[which] = e;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 99);
    int types_seen[MBS_JOINT_TYPE_COUNT] = { 0 };
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree_p(&rng, 1 + mbs_rng_int(&rng, 8), getenv("TYPES") ? (unsigned)atoi(getenv("TYPES")) : 0, 1);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        for (int i = 1; i <= m->nb; i++) types_seen[m->joint[i].type]++;
        const int nq = m->nq, np = m->nparam;
        size_t n1 = (size_t)nq + 1, p1 = (size_t)np + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8);
        double *A = calloc(n1 * n1, 8), *B = calloc(n1 * n1, 8), *C = calloc(n1 * n1, 8);
        double *P = calloc(n1 * p1, 8), *R = calloc(n1 * (n1 > p1 ? n1 : p1), 8);
        double *A2 = calloc(n1 * n1, 8), *B2 = calloc(n1 * n1, 8), *C2 = calloc(n1 * n1, 8), *P2 = calloc(n1 * p1, 8);
        double *a = calloc(n1, 8), *v = calloc(n1, 8), *dv = calloc(n1, 8), *dr = calloc(p1, 8), *dt = calloc(n1, 8);
        double *u1 = calloc(n1, 8), *u2 = calloc(n1, 8);
        mbs_test_random_state(&rng, m, q, qd, qdd);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(&rng, -2, 2);
        mbs_data *d = mbs_data_create(m, NULL);
        double *xload = calloc(15 * (size_t)(m->nb + 1), 8), *qload = calloc(n1, 8);
        for (int i = 1; i <= m->nb; i++) {
            double pt[3], f[3], n[3], *L = xload + 15 * i;
            for (int k = 0; k < 3; k++) { pt[k] = mbs_rng_uniform(&rng, -1, 1); f[k] = mbs_rng_uniform(&rng, -1, 1); n[k] = mbs_rng_uniform(&rng, -1, 1); }
            mbs_data_add_body_load(d, i, pt, f, n);
            for (int k = 0; k < 3; k++) { L[k] = f[k]; L[3 + k] = n[k]; }
            for (int r = 0; r < 3; r++) for (int k = 0; k < 3; k++) L[6 + 3 * r + k] = pt[r] * f[k];
        }
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = qload[k] = mbs_rng_uniform(&rng, -1, 1);
        /* round-off bounds: the recursions', and solving with M (n eps kappa(M), twice) */
        CHECK(mbs_mass_matrix(m, d, q, A) == MBS_OK, "M");
        const double ro_id = MBS_ROUNDOFF(m->nb), ro_fd = ro_id + 2 * nq * MBS_EPS * mbs_test_cond_spd(A, nq);

        cs_ctx c;
        c.m = m;
        CHECK(mbs_ws_init_cs(&c.w, m) == 0, "ws");
        c.x = calloc((size_t)m->nx, sizeof(mreal));
        c.q = calloc(n1, sizeof(mreal)); c.qd = calloc(n1, sizeof(mreal)); c.qdd = calloc(n1, sizeof(mreal));
        c.tau = calloc(n1, sizeof(mreal)); c.out = calloc(n1, sizeof(mreal));
        c.xload = xload; c.qload = qload;

        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            c.w.ref = (mbs_ref_point)ref;
            /* ---- inverse dynamics ---- */
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "%s", mbs_data_error(d));
            CHECK(mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, P) == MBS_OK, "%s", mbs_data_error(d));
            for (int dir = 0; dir < 2 * nq + np; dir++) {
                for (int k = 0; k < m->nx; k++) c.x[k] = m->x[k];
                for (int k = 0; k < nq; k++) { c.q[k] = q[k]; c.qd[k] = qd[k]; c.qdd[k] = qdd[k]; }
                if (dir < nq) c.q[dir] += I * H;
                else if (dir < 2 * nq) c.qd[dir - nq] += I * H;
                else {
                    const mbs_param_info *pp = &m->param[dir - 2 * nq];
                    for (int t = 0; t < pp->ntargets; t++) c.x[pp->target[t]] += I * H * pp->scale[t];
                }
                cs_id(&c);
                for (int r = 0; r < nq; r++) {
                    double dref = cimag(c.out[r]) / H;
                    if (dir < nq) R[r * nq + dir] = dref;
                    else if (dir < 2 * nq) C[r * nq + dir - nq] = dref;
                    else P2[r * np + dir - 2 * nq] = dref;
                }
            }
            record(0, A, R, nq * nq, ro_id);
            record(1, B, C, nq * nq, ro_id);
            if (np) record(2, P, P2, nq * np, ro_id);
            /* directional = Jacobian-vector product */
            for (int k = 0; k < nq; k++) { v[k] = mbs_rng_uniform(&rng, -1, 1); dv[k] = mbs_rng_uniform(&rng, -1, 1); a[k] = mbs_rng_uniform(&rng, -1, 1); }
            for (int k = 0; k < np; k++) dr[k] = mbs_rng_uniform(&rng, -1, 1);
            CHECK(mbs_mass_matrix(m, d, q, C2) == MBS_OK, "M");
            CHECK(mbs_inverse_dynamics_directional(m, d, q, qd, qdd, v, dv, a, dr, dt) == MBS_OK, "dir");
            for (int r = 0; r < nq; r++) {
                u1[r] = 0;
                for (int k = 0; k < nq; k++) u1[r] += A[r * nq + k] * v[k] + B[r * nq + k] * dv[k] + C2[r * nq + k] * a[k];
                for (int k = 0; k < np; k++) u1[r] += P[r * np + k] * dr[k];
            }
            CHECK(mbs_rel_err(dt, u1, nq) <= ro_id, "ID directional vs Jacobians: %g", mbs_rel_err(dt, u1, nq));

            /* ---- forward dynamics ---- */
            CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, a, A, B, C) == MBS_OK, "%s", mbs_data_error(d));
            CHECK(mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, NULL, P) == MBS_OK, "%s", mbs_data_error(d));
            CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, NULL, A2, B2, C2) == MBS_OK, "%s", mbs_data_error(d));
            CHECK(mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, NULL, P2) == MBS_OK, "%s", mbs_data_error(d));
            record(7, A, A2, nq * nq, ro_fd);
            record(7, B, B2, nq * nq, ro_fd);
            record(7, C, C2, nq * nq, ro_fd);
            if (np) record(7, P, P2, nq * np, ro_fd);
            for (int dir = 0; dir < 3 * nq + np; dir++) {
                for (int k = 0; k < m->nx; k++) c.x[k] = m->x[k];
                for (int k = 0; k < nq; k++) { c.q[k] = q[k]; c.qd[k] = qd[k]; c.tau[k] = tau[k]; }
                if (dir < nq) c.q[dir] += I * H;
                else if (dir < 2 * nq) c.qd[dir - nq] += I * H;
                else if (dir < 3 * nq) c.tau[dir - 2 * nq] += I * H;
                else {
                    const mbs_param_info *pp = &m->param[dir - 3 * nq];
                    for (int t = 0; t < pp->ntargets; t++) c.x[pp->target[t]] += I * H * pp->scale[t];
                }
                cs_fd(&c);
                for (int r = 0; r < nq; r++) {
                    double dref = cimag(c.out[r]) / H;
                    if (dir < nq) A2[r * nq + dir] = dref;
                    else if (dir < 2 * nq) B2[r * nq + dir - nq] = dref;
                    else if (dir < 3 * nq) C2[r * nq + dir - 2 * nq] = dref;
                    else P2[r * np + dir - 3 * nq] = dref;
                }
            }
            record(3, A, A2, nq * nq, ro_fd);
            record(4, B, B2, nq * nq, ro_fd);
            record(5, C, C2, nq * nq, ro_fd);
            if (np) record(6, P, P2, nq * np, ro_fd);
            /* directional FD */
            for (int k = 0; k < nq; k++) dt[k] = mbs_rng_uniform(&rng, -1, 1);
            CHECK(mbs_forward_dynamics_directional(m, d, MBS_FD_RECURSIVE, q, qd, tau, v, dv, dt, dr, NULL, u2) == MBS_OK, "fd dir");
            for (int r = 0; r < nq; r++) {
                u1[r] = 0;
                for (int k = 0; k < nq; k++) u1[r] += A[r * nq + k] * v[k] + B[r * nq + k] * dv[k] + C[r * nq + k] * dt[k];
                for (int k = 0; k < np; k++) u1[r] += P[r * np + k] * dr[k];
            }
            CHECK(mbs_rel_err(u2, u1, nq) <= ro_fd, "FD directional vs Jacobians: %g", mbs_rel_err(u2, u1, nq));
        }
        mbs_ws_free_cs(&c.w);
        free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.tau); free(c.out);
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(qdd); free(tau); free(A); free(B); free(C); free(P); free(R);
        free(A2); free(B2); free(C2); free(P2); free(a); free(v); free(dv); free(dr); free(dt); free(u1); free(u2);
        free(xload); free(qload);
    }
    for (int k = 0; k < 8; k++) printf("worst relative error %-10s %.3f of its round-off bound\n", g_names[k], g_worst[k]);
    for (int k = 0; k < 8; k++) CHECK(g_worst[k] <= 1, "%s: %g of its bound", g_names[k], g_worst[k]);
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++) CHECK(types_seen[t] > 20, "joint type %d covered %d", t, types_seen[t]);
    return mbs_test_summary("derivatives");
}
