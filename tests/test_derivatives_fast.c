/*
 * test_derivatives_fast.c - the all-columns Jacobians of inverse and forward
 * dynamics (src/kernels/inverse_dynamics_jacobians.c, used by
 * mbs_inverse_dynamics_derivatives and mbs_forward_dynamics_derivatives)
 * against the complex-step derivatives of the kernels and against the
 * generic tangent sweeps (mbs_inverse_dynamics_directional, one unit
 * direction per column), on 300 random trees with every joint type, user
 * body and joint loads, the three reference points, and states of three
 * kinds:
 *   - tangent: |p| = 1, p.pd = 0, p.pdd = -|pd|^2 (as on a trajectory);
 *   - free: |p| = 1 but qd, qdd arbitrary (p.pd != 0): the decomposition of
 *     the Euler columns only needs |p| = 1;
 *   - off: |p| = 1 + 1e-9 (accepted by the state check): the rigid-body
 *     identities fail at O(1e-9), so dtau/dq and dtau/dqd fall back to one
 *     tangent sweep per column (FD derivatives are not checked there: their
 *     Euler completion, unchanged, assumes |p| = 1).
 * Also: the fast kernel alone with the Euler columns skipped leaves them at
 * zero, and its mass matrix equals mbs_mass_matrix; force elements
 * (spring-dampers, body loads: the tangents of their loads are added per
 * column); the exact structural zeros between independent branches; a long
 * chain far from the global origin. Relative errors within round-off:
 * MBS_ROUNDOFF of the tree, plus 2 n eps kappa(M) for forward dynamics.
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

#define NTREES 300
static const double H = 1e-30;

static double g_worst[6], g_col[2];
static const char *g_names[6] = { "dtau/dq vs cs", "dtau/dqd vs cs", "dtau/dq vs tangent",
                                  "dtau/dqd vs tangent", "dqdd/dq vs cs", "dqdd/dqd vs cs" };

/* the worst error as a fraction of its round-off bound */
static void record(int which, const double *a, const double *ref, int n, double bound)
{
    double e = mbs_rel_err(a, ref, n) / bound;
    if (!(e <= g_worst[which])) g_worst[which] = e;
}

/* worst per-column relative error (scale max(1, |column|)), reported only */
static void record_cols(int which, const double *a, const double *ref, int nq)
{
    for (int k = 0; k < nq; k++) {
        double s = 1, e = 0;
        for (int r = 0; r < nq; r++) s = fmax(s, fabs(ref[r * nq + k]));
        for (int r = 0; r < nq; r++) e = fmax(e, fabs(a[r * nq + k] - ref[r * nq + k]));
        g_col[which] = fmax(g_col[which], e / s);
    }
}

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *qdd, *tau, *out;
    const double *xload, *qload;
} cs_ctx;

static void cs_loads(cs_ctx *c)
{
    for (int k = 0; k < 15 * (c->m->nb + 1); k++) c->w.xfrc[k] = c->xload[k];
    for (int k = 0; k < c->m->nq; k++) c->w.qfrc[k] = c->qload[k];
}

/* complex-step Jacobians of ID (fd = 0) or fr-FD (fd = 1) w.r.t. q and qd */
static void cs_jacobians(cs_ctx *c, int fd, const double *q, const double *qd, const double *qdd,
                         const double *tau, double *Jq, double *Jqd)
{
    const int nq = c->m->nq;
    for (int k = 0; k < c->m->nx; k++) c->x[k] = c->m->x[k];
    for (int dir = 0; dir < 2 * nq; dir++) {
        for (int k = 0; k < nq; k++) {
            c->q[k] = q[k]; c->qd[k] = qd[k]; c->qdd[k] = qdd[k]; c->tau[k] = tau[k];
        }
        if (dir < nq) c->q[dir] += I * H; else c->qd[dir - nq] += I * H;
        mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, fd ? NULL : c->qdd, fd ? 1 : 2);
        cs_loads(c);
        mbs_body_terms_cs(c->m, c->x, &c->w);
        if (fd) mbs_aba_cs(c->m, &c->w, c->q, c->qd, c->tau, c->out);
        else mbs_rnea_cs(c->m, &c->w, c->out);
        for (int r = 0; r < nq; r++) {
            double v = cimag(c->out[r]) / H;
            if (dir < nq) Jq[r * nq + dir] = v; else Jqd[r * nq + dir - nq] = v;
        }
    }
}

static int is_ancestor(const mbs_model *m, int a, int b)
{
    for (int j = b; j > 0; j = m->joint[j].parent)
        if (j == a) return 1;
    return 0;
}

static int coord_body(const mbs_model *m, int k)
{
    for (int i = 1; i <= m->nb; i++)
        if (k >= m->joint[i].qoff && k < m->joint[i].qoff + m->joint[i].nq) return i;
    return 0;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2024);
    int types_seen[MBS_JOINT_TYPE_COUNT] = { 0 }, kinds_seen[3] = { 0 };
    long zero_violations = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 10), 0);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        for (int i = 1; i <= m->nb; i++) types_seen[m->joint[i].type]++;
        const int nq = m->nq, kind = tree % 3;
        kinds_seen[kind]++;
        const size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8);
        double *A = calloc(n1 * n1, 8), *B = calloc(n1 * n1, 8), *R = calloc(n1 * n1, 8), *S = calloc(n1 * n1, 8);
        double *e = calloc(n1, 8), *col = calloc(n1, 8);
        mbs_test_random_state(&rng, m, q, qd, qdd);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(&rng, -2, 2);
        if (kind >= 1)
            for (int k = 0; k < nq; k++) { qd[k] = mbs_rng_uniform(&rng, -2, 2); qdd[k] = mbs_rng_uniform(&rng, -2, 2); }
        if (kind == 2)
            for (int i = 1; i <= m->nb; i++)
                if (m->joint[i].euler >= 0)
                    for (int a = 0; a < 4; a++) q[m->joint[i].qoff + m->joint[i].euler + a] *= 1 + 1e-9;
        mbs_data *d = mbs_data_create(m, NULL);
        double *xload = calloc(15 * (size_t)(m->nb + 1), 8), *qload = calloc(n1, 8);
        for (int i = 1; i <= m->nb; i++) {
            double pt[3], f[3], n[3], *L = xload + 15 * i;
            for (int k = 0; k < 3; k++) { pt[k] = mbs_rng_uniform(&rng, -1, 1); f[k] = mbs_rng_uniform(&rng, -1, 1); n[k] = mbs_rng_uniform(&rng, -1, 1); }
            if (tree % 5 == 4) continue;  /* some trees without loads */
            mbs_data_add_body_load(d, i, pt, f, n);
            for (int k = 0; k < 3; k++) { L[k] = f[k]; L[3 + k] = n[k]; }
            for (int r = 0; r < 3; r++) for (int k = 0; k < 3; k++) L[6 + 3 * r + k] = pt[r] * f[k];
        }
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = qload[k] = mbs_rng_uniform(&rng, -1, 1);
        /* round-off bounds: the recursions', and solving with M (n eps kappa(M), twice) */
        double *Mk = calloc(n1 * n1, 8);
        CHECK(mbs_mass_matrix(m, d, q, Mk) == MBS_OK, "M");
        const double ro_id = MBS_ROUNDOFF(m->nb), ro_fd = ro_id + 2 * nq * MBS_EPS * mbs_test_cond_spd(Mk, nq);
        free(Mk);
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
            /* ---- inverse dynamics: complex step ---- */
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "%s", mbs_data_error(d));
            cs_jacobians(&c, 0, q, qd, qdd, tau, R, S);
            record(0, A, R, nq * nq, ro_id);
            record(1, B, S, nq * nq, ro_id);
            record_cols(0, A, R, nq);
            record_cols(1, B, S, nq);
            /* ---- the generic tangent sweeps ---- */
            for (int k = 0; k < nq; k++) {
                e[k] = 1;
                CHECK(mbs_inverse_dynamics_directional(m, d, q, qd, qdd, e, NULL, NULL, NULL, col) == MBS_OK, "dir");
                for (int r = 0; r < nq; r++) R[r * nq + k] = col[r];
                CHECK(mbs_inverse_dynamics_directional(m, d, q, qd, qdd, NULL, e, NULL, NULL, col) == MBS_OK, "dir");
                for (int r = 0; r < nq; r++) S[r * nq + k] = col[r];
                e[k] = 0;
            }
            record(2, A, R, nq * nq, ro_id);
            record(3, B, S, nq * nq, ro_id);
            /* exact zeros between independent branches */
            for (int r = 0; r < nq; r++)
                for (int k = 0; k < nq; k++) {
                    int br = coord_body(m, r), bk = coord_body(m, k);
                    if (!is_ancestor(m, br, bk) && !is_ancestor(m, bk, br) &&
                        (A[r * nq + k] != 0.0 || B[r * nq + k] != 0.0))
                        zero_violations++;
                }
            /* ---- forward dynamics (fr), complex step; not off |p| = 1,
             * where the Euler completion of the FD derivatives (unchanged,
             * also in the directional path) assumes |p| = 1 ---- */
            if (ref == MBS_REF_COM && kind < 2) {
                CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, NULL, A, B, NULL) == MBS_OK,
                      "%s", mbs_data_error(d));
                cs_jacobians(&c, 1, q, qd, qdd, tau, R, S);
                record(4, A, R, nq * nq, ro_fd);
                record(5, B, S, nq * nq, ro_fd);
            }
        }
        /* the complex build of the kernel alone, Euler columns of dtau/dq
         * skipped: they stay zero, every other column matches (on
         * |p| = 1, where the library uses it) */
        if (kind < 2) {
            mbs_data_set_ref(d, MBS_REF_COM);
            c.w.ref = MBS_REF_COM;
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, R, S) == MBS_OK, "ID");
            for (int k = 0; k < m->nx; k++) c.x[k] = m->x[k];
            for (int k = 0; k < nq; k++) { c.q[k] = q[k]; c.qd[k] = qd[k]; c.qdd[k] = qdd[k]; }
            mbs_kin_forward_cs(m, c.x, &c.w, c.q, c.qd, c.qdd, 2);
            cs_loads(&c);
            mbs_body_terms_cs(m, c.x, &c.w);
            mbs_rnea_cs(m, &c.w, c.out);
            mreal *Ac = calloc(n1 * n1, sizeof(mreal)), *Bc = calloc(n1 * n1, sizeof(mreal));
            mreal *Mc = calloc(n1 * n1, sizeof(mreal));
            mbs_rnea_jacobians_cs(m, c.x, &c.w, c.q, c.qd, c.qdd, 1, Ac, Bc, Mc);
            /* the mass matrix that comes with it */
            CHECK(mbs_mass_matrix(m, d, q, A) == MBS_OK, "M");
            for (int k = 0; k < nq * nq; k++) B[k] = creal(Mc[k]);
            CHECK(mbs_rel_err(B, A, nq * nq) <= ro_id, "kernel M vs mbs_mass_matrix: %g", mbs_rel_err(B, A, nq * nq));
            free(Mc);
            int euler_nonzero = 0;
            for (int r = 0; r < nq; r++)
                for (int k = 0; k < nq; k++) {
                    const int b = coord_body(m, k);
                    const int eul = m->joint[b].euler >= 0 && k >= m->joint[b].qoff + m->joint[b].euler;
                    A[r * nq + k] = eul ? R[r * nq + k] : creal(Ac[r * nq + k]);
                    B[r * nq + k] = creal(Bc[r * nq + k]);
                    if (eul && Ac[r * nq + k] != 0) euler_nonzero++;
                }
            CHECK(euler_nonzero == 0, "skipped Euler columns not zero (%d)", euler_nonzero);
            CHECK(mbs_rel_err(A, R, nq * nq) <= ro_id, "complex build dtau/dq: %g", mbs_rel_err(A, R, nq * nq));
            CHECK(mbs_rel_err(B, S, nq * nq) <= ro_id, "complex build dtau/dqd: %g", mbs_rel_err(B, S, nq * nq));
            free(Ac); free(Bc);
        }
        mbs_ws_free_cs(&c.w);
        free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.tau); free(c.out);
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(qdd); free(tau); free(A); free(B); free(R); free(S); free(e); free(col);
        free(xload); free(qload);
    }
    /* force elements (spring-dampers between body points or to the ground,
     * body loads in global or body axes): the kernel plus the tangents of
     * the element loads (mbs_forces_apply_d) against the complex step of
     * the kernels with the elements, three reference points, ID and FD */
    {
        double worst[4] = { 0, 0, 0, 0 };
        int nel = 0;
        for (int tree = 0; tree < 60; tree++) {
            mbs_error err;
            const int nb = 1 + mbs_rng_int(&rng, 8);
            struct mbs_builder *bld = mbs_test_random_tree_builder(&rng, nb, 0);
            CHECK(bld != NULL, "builder");
            if (!bld) continue;
            const int ne = 1 + mbs_rng_int(&rng, 4);
            for (int el = 0; el < ne; el++) {
                char name[32];
                snprintf(name, sizeof name, "fe%d", el);
                const int b1 = 1 + mbs_rng_int(&rng, nb), b2 = mbs_rng_int(&rng, nb + 1);
                double pt[3], f[3], n[3];
                for (int k = 0; k < 3; k++) {
                    pt[k] = mbs_rng_uniform(&rng, -1, 1);
                    f[k] = mbs_rng_uniform(&rng, -2, 2);
                    n[k] = mbs_rng_uniform(&rng, -1, 1);
                }
                int h;
                if (el % 2 == 0 && b2 != b1) {
                    const int p1 = mbs_builder_find_point(bld, b1, "p");
                    const int p2 = b2 > 0 ? mbs_builder_find_point(bld, b2, "p")
                                          : mbs_builder_add_point(bld, 0, NULL, pt, name, &err);
                    const double len = mbs_rng_uniform(&rng, 0.1, 1.5);
                    h = mbs_builder_add_spring_damper(bld, name, p1, p2, mbs_rng_uniform(&rng, 1, 40),
                                                      mbs_rng_uniform(&rng, 0, 3), &len, name, &err);
                } else {
                    h = mbs_builder_add_body_load(bld, name, b1, mbs_rng_int(&rng, 2) ? -1 : mbs_builder_find_point(bld, b1, "p"),
                                                  f, n, mbs_rng_int(&rng, 2), -1, name, &err);
                }
                CHECK(h >= 0, "element: %s", err.msg);
                nel++;
            }
            mbs_model *m = mbs_builder_finish(bld, &err);
            mbs_builder_free(bld);
            CHECK(m != NULL, "finish: %s", m ? "" : err.msg);
            if (!m) continue;
            const int nq = m->nq;
            const size_t n1 = (size_t)nq + 1;
            double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8);
            double *A = calloc(n1 * n1, 8), *B = calloc(n1 * n1, 8), *R = calloc(n1 * n1, 8), *S = calloc(n1 * n1, 8);
            mbs_test_random_state(&rng, m, q, qd, qdd);
            for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(&rng, -2, 2);
            mbs_data *d = mbs_data_create(m, NULL);
            CHECK(mbs_mass_matrix(m, d, q, A) == MBS_OK, "M");
            const double ro_id = MBS_ROUNDOFF(m->nb), ro_fd = ro_id + 2 * nq * MBS_EPS * mbs_test_cond_spd(A, nq);
            mbs_ws_cs w;
            CHECK(mbs_ws_init_cs(&w, m) == 0, "ws");
            mreal *x = calloc((size_t)m->nx, sizeof(mreal)), *qc = calloc(n1, sizeof(mreal));
            mreal *qdc = calloc(n1, sizeof(mreal)), *qddc = calloc(n1, sizeof(mreal));
            mreal *tc = calloc(n1, sizeof(mreal)), *out = calloc(n1, sizeof(mreal));
            for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
            for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
                mbs_data_set_ref(d, (mbs_ref_point)ref);
                w.ref = (mbs_ref_point)ref;
                for (int fd = 0; fd < 2; fd++) {
                    if (fd && ref != MBS_REF_COM) continue;
                    if (fd) CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, NULL, A, B, NULL) == MBS_OK,
                                  "%s", mbs_data_error(d));
                    else CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "%s", mbs_data_error(d));
                    for (int dir = 0; dir < 2 * nq; dir++) {
                        for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; qddc[k] = qdd[k]; tc[k] = tau[k]; }
                        if (dir < nq) qc[dir] += I * H; else qdc[dir - nq] += I * H;
                        mbs_kin_forward_cs(m, x, &w, qc, qdc, fd ? NULL : qddc, fd ? 1 : 2);
                        for (int k = 0; k < 15 * (m->nb + 1); k++) w.xfrc[k] = 0;
                        for (int k = 0; k < nq; k++) w.qfrc[k] = 0;
                        mbs_forces_apply_cs(m, x, &w, qc, qdc, 0);
                        mbs_body_terms_cs(m, x, &w);
                        if (fd) mbs_aba_cs(m, &w, qc, qdc, tc, out);
                        else mbs_rnea_cs(m, &w, out);
                        for (int r = 0; r < nq; r++) {
                            const double v = cimag(out[r]) / H;
                            if (dir < nq) R[r * nq + dir] = v; else S[r * nq + dir - nq] = v;
                        }
                    }
                    /* as fractions of the round-off bounds (forward dynamics: with kappa(M)) */
                    const double bnd = fd ? ro_fd : ro_id;
                    worst[2 * fd] = fmax(worst[2 * fd], mbs_rel_err(A, R, nq * nq) / bnd);
                    worst[2 * fd + 1] = fmax(worst[2 * fd + 1], mbs_rel_err(B, S, nq * nq) / bnd);
                }
            }
            mbs_ws_free_cs(&w);
            free(x); free(qc); free(qdc); free(qddc); free(tc); free(out);
            mbs_data_free(d);
            mbs_model_free(m);
            free(q); free(qd); free(qdd); free(tau); free(A); free(B); free(R); free(S);
        }
        printf("force elements (%d in 60 trees): dtau/dq %.3f, dtau/dqd %.3f, dqdd/dq %.3f, dqdd/dqd %.3f of their "
               "round-off bounds\n", nel, worst[0], worst[1], worst[2], worst[3]);
        for (int k = 0; k < 4; k++) CHECK(worst[k] <= 1, "force elements, block %d: %g of its bound", k, worst[k]);
    }
    /* a 24-link spatial chain with a floating base, 1 km from the origin:
     * the kernel works about the model's mass centre, not the origin */
    {
        mbs_error err;
        char *json = mbs_generate_chain_json(24, MBS_JOINT_REVOLUTE, 1, &err);
        mbs_model *m = json ? mbs_model_load_string(json, "chain", &err) : NULL;
        CHECK(m != NULL, "chain: %s", err.msg);
        free(json);
        if (m) {
            const int nq = m->nq;
            const size_t n1 = (size_t)nq;
            double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8);
            double *A = calloc(n1 * n1, 8), *B = calloc(n1 * n1, 8), *R = calloc(n1 * n1, 8), *S = calloc(n1 * n1, 8);
            double *xl = calloc(15 * (size_t)(m->nb + 1), 8), *ql = calloc(n1, 8);
            mbs_test_random_state(&rng, m, q, qd, qdd);
            q[0] += 1000; q[1] -= 700;
            mbs_data *d = mbs_data_create(m, NULL);
            cs_ctx c;
            c.m = m;
            CHECK(mbs_ws_init_cs(&c.w, m) == 0, "ws");
            c.x = calloc((size_t)m->nx, sizeof(mreal));
            c.q = calloc(n1, sizeof(mreal)); c.qd = calloc(n1, sizeof(mreal)); c.qdd = calloc(n1, sizeof(mreal));
            c.tau = calloc(n1, sizeof(mreal)); c.out = calloc(n1, sizeof(mreal));
            c.xload = xl; c.qload = ql;
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "far chain");
            cs_jacobians(&c, 0, q, qd, qdd, tau, R, S);
            double ea = mbs_rel_err(A, R, nq * nq), eb = mbs_rel_err(B, S, nq * nq);
            printf("24-link chain 1 km from the origin: dtau/dq %.2e, dtau/dqd %.2e\n", ea, eb);
            /* the kernel works about the model's mass centre: its terms stay of the size of the chain's */
            CHECK(ea <= MBS_ROUNDOFF(m->nb) && eb <= MBS_ROUNDOFF(m->nb), "far chain: %g %g", ea, eb);
            mbs_ws_free_cs(&c.w);
            free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.tau); free(c.out);
            mbs_data_free(d);
            mbs_model_free(m);
            free(q); free(qd); free(qdd); free(tau); free(A); free(B); free(R); free(S); free(xl); free(ql);
        }
    }
    for (int k = 0; k < 6; k++) printf("worst relative error %-20s %.3f of its round-off bound\n", g_names[k], g_worst[k]);
    printf("worst per-column relative error vs complex step: dtau/dq %.2e, dtau/dqd %.2e\n", g_col[0], g_col[1]);
    for (int k = 0; k < 6; k++) CHECK(g_worst[k] <= 1, "%s: %g of its bound", g_names[k], g_worst[k]);
    CHECK(zero_violations == 0, "%ld non-zero entries between independent branches", zero_violations);
    for (int t = 1; t < MBS_JOINT_TYPE_COUNT; t++) CHECK(types_seen[t] > 30, "joint type %d covered %d", t, types_seen[t]);
    for (int k = 0; k < 3; k++) CHECK(kinds_seen[k] > 50, "state kind %d", k);
    return mbs_test_summary("derivatives_fast");
}
