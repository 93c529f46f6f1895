/*
 * bench_mujoco_fd.c - mbsens against MuJoCo 2.2.2 on the same models:
 * agreement of forward dynamics, inverse dynamics and the mass matrix, and
 * ns/call of each side.
 *
 * The MJCF is written from our model by mjb_load_mjcf and states,
 * accelerations, forces and mass matrices are converted by the joint map of
 * mjbridge (mjbridge/mjbridge.c describes both: MuJoCo body frames = ours,
 * ball joints in child-frame angular velocities, qd = T v, tau_mj = T^T tau,
 * M_mj = T^T M T). MuJoCo 2.2.2 rejects moving bodies without mass
 * ("mass and inertia of moving bodies must be larger than mjMINVAL"), so
 * massless bodies (human43: 23 D-H frames) get mass 1e-12 kg and inertia
 * 1e-14 kg m^2 on BOTH sides for the agreement check (mjb_fill_massless);
 * the difference this makes to our result is printed.
 *
 * Checks at 20 random states per model (relative infinity-norm errors,
 * must be <= 1e-9, else exit status 1):
 *   FD  our fully recursive qdd (converted) vs mj_forward's qacc
 *   ID  our tau at qdd(qacc) (converted) vs mj_rne(flg_acc = 1) at qacc
 *   MM  T^T M T vs mj_crb + mj_fullM
 *
 * Usage: bench_mujoco_fd [--quick] [--min-time S] [--reps N] [HUMAN43_JSON]
 * Environment: MBS_BENCH_MJCF_DIR=dir keeps a copy of every MJCF written.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lapacke.h>

#include "bench_common.h"
#include "bench_mujoco_common.h"

#define TOL 1e-9
#define NSTATES 20

/* ---------- accuracy diagnostics ----------
 * For M a = f with M, f from MuJoCo (dense mj_fullM and -qfrc_bias, which
 * agree with ours to ~1e-14): the 2-norm condition number of M, a
 * reference solution (long double Cholesky + iterative refinement: the
 * exact solution of this double data to ~cond * 1e-19), and for each
 * candidate solution its normwise backward error
 *   eta = |M a - f|_inf / (|M|_inf |a|_inf + |f|_inf)
 * (~1e-16 for a backward-stable solver) and its forward error against
 * the reference. Disagreement between two backward-stable solvers is
 * bounded by about cond(M) * eta. */
typedef struct diag {
    double cond;
    double bwd[3];   /* ours fr, ours semi, MuJoCo */
    double fwd[3];
} diag;

static double cond2_spd(int n, const double *M)
{
    double *A = malloc(sizeof(double) * (size_t)n * n), *w = malloc(sizeof(double) * n);
    memcpy(A, M, sizeof(double) * (size_t)n * n);
    double c = NAN;
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, A, n, w) == 0 && w[0] > 0) c = w[n - 1] / w[0];
    free(A);
    free(w);
    return c;
}

static void ref_solve(int n, const double *M, const double *f, double *a)
{
    long double *L = malloc(sizeof(long double) * (size_t)n * n);
    long double *x = malloc(sizeof(long double) * n), *r = malloc(sizeof(long double) * n);
    for (size_t k = 0; k < (size_t)n * n; k++) L[k] = M[k];
    for (int j = 0; j < n; j++) {                     /* Cholesky, lower */
        long double s = L[(size_t)j * n + j];
        for (int k = 0; k < j; k++) s -= L[(size_t)j * n + k] * L[(size_t)j * n + k];
        long double d = sqrtl(s);
        L[(size_t)j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            long double t = L[(size_t)i * n + j];
            for (int k = 0; k < j; k++) t -= L[(size_t)i * n + k] * L[(size_t)j * n + k];
            L[(size_t)i * n + j] = t / d;
        }
    }
    for (int k = 0; k < n; k++) { x[k] = 0; r[k] = f[k]; }
    for (int it = 0; it < 4; it++) {
        /* solve L L^T dx = r, x += dx, r = f - M x */
        for (int i = 0; i < n; i++) {
            long double t = r[i];
            for (int k = 0; k < i; k++) t -= L[(size_t)i * n + k] * r[k];
            r[i] = t / L[(size_t)i * n + i];
        }
        for (int i = n - 1; i >= 0; i--) {
            long double t = r[i];
            for (int k = i + 1; k < n; k++) t -= L[(size_t)k * n + i] * r[k];
            r[i] = t / L[(size_t)i * n + i];
        }
        for (int i = 0; i < n; i++) x[i] += r[i];
        for (int i = 0; i < n; i++) {
            long double t = f[i];
            for (int k = 0; k < n; k++) t -= (long double)M[(size_t)i * n + k] * x[k];
            r[i] = t;
        }
    }
    for (int k = 0; k < n; k++) a[k] = (double)x[k];
    free(L);
    free(x);
    free(r);
}

static double backward_error(int n, const double *M, const double *f, const double *a)
{
    double rmax = 0, Mn = 0, an = 0, fn = 0;
    for (int i = 0; i < n; i++) {
        long double t = -(long double)f[i];
        double rs = 0;
        for (int k = 0; k < n; k++) {
            t += (long double)M[(size_t)i * n + k] * a[k];
            rs += fabs(M[(size_t)i * n + k]);
        }
        if (fabsl(t) > rmax) rmax = (double)fabsl(t);
        if (rs > Mn) Mn = rs;
        if (fabs(a[i]) > an) an = fabs(a[i]);
        if (fabs(f[i]) > fn) fn = fabs(f[i]);
    }
    return rmax / (Mn * an + fn);
}

typedef struct agree {
    double fd, fd_semi, id, mm, smooth;
    diag dg;         /* worst over the states */
} agree;

/* The comparisons at NSTATES random states. */
static agree check_agreement(const mjpair *P, unsigned seed)
{
    const mbs_model *m = P->m;
    const mjModel *mm = P->mm;
    const int nq = P->nq, nv = P->nv;
    mbs_data *d = bench_data(m);
    mjData *md = mj_makeData(mm);
    double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq);
    double *qdd = malloc(sizeof(double) * nq), *tau = malloc(sizeof(double) * nq);
    double *M = malloc(sizeof(double) * nq * nq);
    double *a_ours = malloc(sizeof(double) * nv), *a_mj = malloc(sizeof(double) * nv);
    double *t_ours = malloc(sizeof(double) * nv), *t_mj = malloc(sizeof(double) * nv);
    double *Mm = malloc(sizeof(double) * nv * nv), *Mo = malloc(sizeof(double) * nv * nv);
    double *qacc_in = malloc(sizeof(double) * nv), *smooth = malloc(sizeof(double) * nv);
    double *a_semi = malloc(sizeof(double) * nv), *a_ref = malloc(sizeof(double) * nv);
    agree worst;
    memset(&worst, 0, sizeof worst);
    bench_rng r;
    bench_rng_seed(&r, seed);
    for (int s = 0; s < NSTATES; s++) {
        bench_random_state(m, &r, 1.0, 1.0, q, qd, NULL);
        /* ---- forward dynamics ---- */
        bench_check(mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, NULL, qdd), d, "FD fr");
        mjb_qacc_from_ours(&P->map, q, qd, qdd, a_ours);
        mjb_set_state(&P->map, md, q, qd);
        mj_forward(mm, md);
        mju_copy(a_mj, md->qacc, nv);
        double e = mjb_relerr(a_ours, a_mj, nv);
        if (e > worst.fd || isnan(e)) worst.fd = e;
        bench_check(mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, NULL, qdd), d, "FD semi");
        mjb_qacc_from_ours(&P->map, q, qd, qdd, a_semi);
        e = mjb_relerr(a_semi, a_mj, nv);
        if (e > worst.fd_semi || isnan(e)) worst.fd_semi = e;
        /* accuracy diagnostics on MuJoCo's M and bias at this state */
        {
            const double *sol[3] = { a_ours, a_semi, a_mj };
            mj_fullM(mm, Mm, md->qM);
            for (int k = 0; k < nv; k++) smooth[k] = -md->qfrc_bias[k];
            ref_solve(nv, Mm, smooth, a_ref);
            double c = cond2_spd(nv, Mm);
            if (c > worst.dg.cond || isnan(c)) worst.dg.cond = c;
            for (int k = 0; k < 3; k++) {
                double b = backward_error(nv, Mm, smooth, sol[k]), fe = mjb_relerr(sol[k], a_ref, nv);
                if (b > worst.dg.bwd[k]) worst.dg.bwd[k] = b;
                if (fe > worst.dg.fwd[k]) worst.dg.fwd[k] = fe;
            }
        }
        /* MuJoCo's smooth pipeline used in the timing (sanity: equals mj_forward) */
        mj_kinematics(mm, md); mj_comPos(mm, md); mj_crb(mm, md); mj_factorM(mm, md);
        mj_comVel(mm, md); mj_rne(mm, md, 0, md->qfrc_bias);
        for (int k = 0; k < nv; k++) smooth[k] = -md->qfrc_bias[k];
        mj_solveM(mm, md, md->qacc, smooth, 1);
        e = mjb_relerr(md->qacc, a_mj, nv);
        if (e > worst.smooth || isnan(e)) worst.smooth = e;
        /* ---- inverse dynamics at a random acceleration ---- */
        for (int k = 0; k < nv; k++) qacc_in[k] = bench_rng_range(&r, -1, 1);
        mjb_qdd_from_mj(&P->map, q, qd, qacc_in, qdd);
        bench_check(mbs_inverse_dynamics(m, d, q, qd, qdd, tau), d, "ID");
        mjb_force_to_mj(&P->map, q, tau, t_ours);
        mju_copy(md->qacc, qacc_in, nv);
        mj_rne(mm, md, 1, t_mj);
        e = mjb_relerr(t_ours, t_mj, nv);
        if (e > worst.id || isnan(e)) worst.id = e;
        /* ---- mass matrix ---- */
        bench_check(mbs_mass_matrix(m, d, q, M), d, "mass matrix");
        mj_fullM(mm, Mm, md->qM);
        mjb_mass_to_mj(&P->map, q, M, Mo);
        e = mjb_relerr(Mo, Mm, nv * nv);
        if (e > worst.mm || isnan(e)) worst.mm = e;
    }
    free(q); free(qd); free(qdd); free(tau); free(M); free(a_ours); free(a_mj);
    free(t_ours); free(t_mj); free(Mm); free(Mo); free(qacc_in); free(smooth);
    free(a_semi); free(a_ref);
    mj_deleteData(md);
    mbs_data_free(d);
    return worst;
}

/* ---------- timing kernels ---------- */

typedef struct tctx {
    const mbs_model *m;
    mbs_data *d;
    const mjModel *mm;
    mjData *md;
    double *q, *qd, *qdd, *out, *Mdense, *tmp;
} tctx;

static void t_ours_fr(void *p)
{
    tctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, NULL, c->out);
    bench_sink = c->out[0];
}
static void t_mj_forward(void *p)
{
    tctx *c = p;
    mj_forward(c->mm, c->md);
    bench_sink = c->md->qacc[0];
}
static void t_mj_smooth(void *p)
{
    tctx *c = p;
    const mjModel *m = c->mm;
    mjData *d = c->md;
    mj_kinematics(m, d); mj_comPos(m, d); mj_crb(m, d); mj_factorM(m, d);
    mj_comVel(m, d); mj_rne(m, d, 0, d->qfrc_bias);
    for (int k = 0; k < m->nv; k++) c->tmp[k] = -d->qfrc_bias[k];
    mj_solveM(m, d, d->qacc, c->tmp, 1);
    bench_sink = d->qacc[0];
}
static void t_ours_id(void *p)
{
    tctx *c = p;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out);
    bench_sink = c->out[0];
}
static void t_mj_id(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_comVel(c->mm, c->md);
    mj_rne(c->mm, c->md, 1, c->out);
    bench_sink = c->out[0];
}
static void t_ours_mm(void *p)
{
    tctx *c = p;
    mbs_mass_matrix(c->m, c->d, c->q, c->Mdense);
    bench_sink = c->Mdense[0];
}
static void t_mj_mm(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_crb(c->mm, c->md);
    mj_fullM(c->mm, c->Mdense, c->md->qM);
    bench_sink = c->Mdense[0];
}

typedef struct timing {
    bench_result fr, fwd, smooth, id_o, id_m, mm_o, mm_m;
    double r_fwd, r_smooth, r_id, r_mm;   /* ours / MuJoCo, median of per-repetition ratios */
} timing;

static timing time_pair(const mjpair *P, const mbs_model *m_ours)
{
    const int nq = P->nq, nv = P->nv;
    tctx c[3];
    timing T;
    double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq);
    double *qdd = malloc(sizeof(double) * nq);
    double *qacc = malloc(sizeof(double) * nv);
    bench_rng r;
    bench_rng_seed(&r, 1);
    bench_random_state(m_ours, &r, 1.0, 1.0, q, qd, qdd);
    for (int k = 0; k < 3; k++) {
        c[k].m = m_ours;
        c[k].d = bench_data(m_ours);
        c[k].mm = P->mm;
        c[k].md = mj_makeData(P->mm);
        c[k].q = q; c[k].qd = qd; c[k].qdd = qdd;
        size_t big = (size_t)(nq > nv ? nq : nv);
        c[k].out = malloc(sizeof(double) * big);
        c[k].Mdense = malloc(sizeof(double) * big * big);
        c[k].tmp = malloc(sizeof(double) * big);
        mjb_set_state(&P->map, c[k].md, q, qd);
        mj_forward(P->mm, c[k].md);
    }
    /* the same qdd on both sides for inverse dynamics */
    mjb_qacc_from_ours(&P->map, q, qd, qdd, qacc);
    {
        bench_fn f[3] = { t_ours_fr, t_mj_forward, t_mj_smooth };
        void *cp[3] = { &c[0], &c[1], &c[2] };
        bench_result res[3];
        double ratio[3];
        bench_time_many(3, f, cp, res, ratio);
        T.fr = res[0]; T.fwd = res[1]; T.smooth = res[2];
        T.r_fwd = 1 / ratio[1];
        T.r_smooth = 1 / ratio[2];
    }
    {
        mju_copy(c[1].md->qacc, qacc, nv);
        bench_fn f[2] = { t_ours_id, t_mj_id };
        void *cp[2] = { &c[0], &c[1] };
        bench_result res[2];
        double ratio[2];
        bench_time_many(2, f, cp, res, ratio);
        T.id_o = res[0]; T.id_m = res[1];
        T.r_id = 1 / ratio[1];
    }
    {
        bench_fn f[2] = { t_ours_mm, t_mj_mm };
        void *cp[2] = { &c[0], &c[1] };
        bench_result res[2];
        double ratio[2];
        bench_time_many(2, f, cp, res, ratio);
        T.mm_o = res[0]; T.mm_m = res[1];
        T.r_mm = 1 / ratio[1];
    }
    for (int k = 0; k < 3; k++) {
        mbs_data_free(c[k].d);
        mj_deleteData(c[k].md);
        free(c[k].out); free(c[k].Mdense); free(c[k].tmp);
    }
    free(q); free(qd); free(qdd); free(qacc);
    return T;
}

/* ---------- main ---------- */

typedef struct mcase {
    const char *label;
    mbs_joint_type joint;    /* chains */
    int n, floating;
    int human;
    int timed;               /* also timed (else agreement only) */
} mcase;

int main(int argc, char **argv)
{
    const char *human_arg = bench_parse_args(argc, argv, NULL);
    const char *human_path = bench_model_path(human_arg, "human43.json");
    static const mcase cases[] = {
        { "revolute 8", MBS_JOINT_REVOLUTE, 8, 0, 0, 1 },
        { "revolute 16", MBS_JOINT_REVOLUTE, 16, 0, 0, 1 },
        { "revolute 32", MBS_JOINT_REVOLUTE, 32, 0, 0, 1 },
        { "revolute 64", MBS_JOINT_REVOLUTE, 64, 0, 0, 1 },
        { "revolute 128", MBS_JOINT_REVOLUTE, 128, 0, 0, 1 },
        { "revolute 256", MBS_JOINT_REVOLUTE, 256, 0, 0, 1 },
        { "spherical 8", MBS_JOINT_SPHERICAL, 8, 0, 0, 1 },
        { "spherical 16", MBS_JOINT_SPHERICAL, 16, 0, 0, 1 },
        { "spherical 32", MBS_JOINT_SPHERICAL, 32, 0, 0, 1 },
        { "spherical 64", MBS_JOINT_SPHERICAL, 64, 0, 0, 1 },
        { "spherical 128", MBS_JOINT_SPHERICAL, 128, 0, 0, 1 },
        { "spherical 256", MBS_JOINT_SPHERICAL, 256, 0, 0, 1 },
        { "human43", 0, 0, 0, 1, 1 },
        { "cardan 8", MBS_JOINT_CARDAN, 8, 0, 0, 0 },
        { "cardan 64", MBS_JOINT_CARDAN, 64, 0, 0, 0 },
        { "revolute 16 fl", MBS_JOINT_REVOLUTE, 16, 1, 0, 0 },
        { "spherical 8 fl", MBS_JOINT_SPHERICAL, 8, 1, 0, 0 },
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    static agree ag[32];
    static timing tm[32];
    int failed = 0;

    printf("# bench_mujoco_fd: mbsens vs MuJoCo %s on the same models\n\n", mj_versionString());
    bench_print_machine(stdout, "    ");
    printf("    MuJoCo: %s (mj_version %d), header mjVERSION_HEADER %d\n", mj_versionString(), mj_version(),
           mjVERSION_HEADER);
    printf("    human model: %s\n\n", human_path);
    if (mj_version() != mjVERSION_HEADER)
        printf("WARNING: MuJoCo library and header versions differ\n\n");

    printf("## Agreement at %d random states per model (relative inf-norm error; limit %.0e)\n\n",
           NSTATES, TOL);
    printf("| model          | nq / nv     | FD fr vs mj_forward | FD semi vs mj_forward | ID vs mj_rne | M vs mj_fullM |\n");
    printf("|----------------|-------------|---------------------|-----------------------|--------------|---------------|\n");
    double human_eps_effect = -1;
    int human_nfill = 0;
    for (int c = 0; c < ncases; c++) {
        const mcase *k = &cases[c];
        mbs_model *m = k->human ? bench_load_model(human_path) : bench_chain(k->n, k->joint, k->floating);
        int nfill = 0;
        if (k->human) {
            /* effect of the epsilon masses on our own result */
            mbs_model *m0 = bench_load_model(human_path);
            nfill = human_nfill = mjb_fill_massless(m, EPS_MASS, EPS_INERTIA);
            mbs_data *d0 = bench_data(m0), *d1 = bench_data(m);
            int nq = m->nq;
            double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq);
            double *a0 = malloc(sizeof(double) * nq), *a1 = malloc(sizeof(double) * nq);
            bench_rng r;
            bench_rng_seed(&r, 7);
            human_eps_effect = 0;
            for (int s = 0; s < NSTATES; s++) {
                bench_random_state(m, &r, 1.0, 1.0, q, qd, NULL);
                bench_check(mbs_forward_dynamics(m0, d0, MBS_FD_RECURSIVE, q, qd, NULL, a0), d0, "FD");
                bench_check(mbs_forward_dynamics(m, d1, MBS_FD_RECURSIVE, q, qd, NULL, a1), d1, "FD");
                double e = mjb_relerr(a1, a0, nq);
                if (e > human_eps_effect) human_eps_effect = e;
            }
            free(q); free(qd); free(a0); free(a1);
            mbs_data_free(d0); mbs_data_free(d1);
            mbs_model_free(m0);
        } else {
            nfill = mjb_fill_massless(m, EPS_MASS, EPS_INERTIA);
        }
        (void)nfill;
        mjpair P;
        char label[64];
        snprintf(label, sizeof label, "%s", k->label);
        for (char *s = label; *s; s++) if (*s == ' ') *s = '_';
        if (mjpair_init(&P, m, label) != 0) return 2;
        ag[c] = check_agreement(&P, 1000u + (unsigned)c);
        int bad = !(ag[c].fd <= TOL && ag[c].id <= TOL && ag[c].mm <= TOL);
        if (bad) failed = 1;
        char dims[32];
        snprintf(dims, sizeof dims, "%d / %d", P.nq, P.nv);
        printf("| %-14s | %-11s | %19.2e | %21.2e | %12.2e | %13.2e |%s\n", k->label, dims, ag[c].fd,
               ag[c].fd_semi, ag[c].id, ag[c].mm, bad ? " FAIL" : "");
        fflush(stdout);
        if (k->timed) tm[c] = time_pair(&P, m);
        mjpair_free(&P);
        mbs_model_free(m);
    }
    double worst_fd = 0, worst_id = 0, worst_mm = 0, worst_smooth = 0;
    for (int c = 0; c < ncases; c++) {
        if (ag[c].fd > worst_fd) worst_fd = ag[c].fd;
        if (ag[c].id > worst_id) worst_id = ag[c].id;
        if (ag[c].mm > worst_mm) worst_mm = ag[c].mm;
        if (ag[c].smooth > worst_smooth) worst_smooth = ag[c].smooth;
    }
    printf("\nWorst: FD %.2e, ID %.2e, M %.2e (limit %.0e): %s\n", worst_fd, worst_id, worst_mm, TOL,
           failed ? "FAIL" : "pass");
    printf("MuJoCo smooth pipeline used for timing vs mj_forward: %.2e\n", worst_smooth);
    printf("\n## Accuracy of the three FD solutions on MuJoCo's M a = f (worst over the states)\n\n");
    printf("cond = 2-norm condition number of M (MuJoCo coordinates); eta = backward error\n"
           "|M a - f| / (|M| |a| + |f|); fwd = relative error against a long-double refined solution.\n"
           "Two backward-stable solvers can differ by about cond * eta.\n\n");
    printf("| model          | cond(M)  | eta fr   | eta semi | eta mj   | fwd fr   | fwd semi | fwd mj   |\n");
    printf("|----------------|----------|----------|----------|----------|----------|----------|----------|\n");
    for (int c = 0; c < ncases; c++) {
        const diag *g = &ag[c].dg;
        printf("| %-14s | %8.2e | %8.1e | %8.1e | %8.1e | %8.1e | %8.1e | %8.1e |\n", cases[c].label, g->cond,
               g->bwd[0], g->bwd[1], g->bwd[2], g->fwd[0], g->fwd[1], g->fwd[2]);
    }
    /* Verdict for each failing case: modelling difference, or conditioning? */
    for (int c = 0; c < ncases; c++) {
        const agree *a = &ag[c];
        if (a->fd <= TOL && a->id <= TOL && a->mm <= TOL) continue;
        int same_model = a->id <= 1e-12 && a->mm <= 1e-12;
        int stable = a->dg.bwd[0] <= 1e-14 && a->dg.bwd[1] <= 1e-14 && a->dg.bwd[2] <= 1e-14;
        printf("\n%s: FD disagreement %.2e > %.0e. ID and M agree to %.1e and %.1e (%s). "
               "cond(M) = %.2e; backward errors fr %.1e, semi %.1e, MuJoCo %.1e (%s). "
               "Error against the refined solution: ours fr %.1e, ours semi %.1e, MuJoCo %.1e. ",
               cases[c].label, a->fd, TOL, a->id, a->mm, same_model ? "same model" : "MODELS DIFFER",
               a->dg.cond, a->dg.bwd[0], a->dg.bwd[1], a->dg.bwd[2],
               stable ? "all backward stable" : "NOT all backward stable", a->dg.fwd[0], a->dg.fwd[1],
               a->dg.fwd[2]);
        if (same_model && stable)
            printf("=> explained by the conditioning of M (forward error ~ cond * eps), not by a bug on either side; "
                   "%s solution is the closer one.\n", a->dg.fwd[0] <= a->dg.fwd[2] ? "our fully recursive" : "MuJoCo's");
        else
            printf("=> NOT explained by conditioning: investigate.\n");
    }
    printf("\nhuman43: %d massless bodies given %.0e kg, %.0e kg m^2 on both sides; this changes our "
           "fully recursive qdd by %.2e (relative, worst of %d states)\n\n",
           human_nfill, EPS_MASS, EPS_INERTIA, human_eps_effect, NSTATES);

    printf("## Forward dynamics: ns/call, side by side\n\n");
    printf("ours = mbs_forward_dynamics(MBS_FD_RECURSIVE); mj_forward = full MuJoCo pipeline with the flags above;\n"
           "mj smooth = mj_kinematics + mj_comPos + mj_crb + mj_factorM + mj_comVel + mj_rne(0) + mj_solveM.\n\n");
    printf("| model          | ours fr | mj_forward | ours/mj_forward | mj smooth | ours/mj smooth |\n");
    printf("|----------------|---------|------------|-----------------|-----------|----------------|\n");
    for (int c = 0; c < ncases; c++) {
        if (!cases[c].timed) continue;
        const timing *T = &tm[c];
        printf("| %-14s | %7.0f | %10.0f | %15.3f | %9.0f | %14.3f |\n", cases[c].label, T->fr.median_ns,
               T->fwd.median_ns, T->r_fwd, T->smooth.median_ns, T->r_smooth);
    }
    printf("\n## Inverse dynamics and mass matrix: ns/call, side by side\n\n");
    printf("ID: ours = mbs_inverse_dynamics (kinematics included); mj = mj_kinematics + mj_comPos + mj_comVel + mj_rne(1).\n"
           "M: ours = mbs_mass_matrix (dense nq x nq); mj = mj_kinematics + mj_comPos + mj_crb + mj_fullM (dense nv x nv).\n\n");
    printf("| model          | ours ID | mj ID  | ours/mj | ours M   | mj M     | ours/mj |\n");
    printf("|----------------|---------|--------|---------|----------|----------|---------|\n");
    for (int c = 0; c < ncases; c++) {
        if (!cases[c].timed) continue;
        const timing *T = &tm[c];
        printf("| %-14s | %7.0f | %6.0f | %7.3f | %8.0f | %8.0f | %7.3f |\n", cases[c].label, T->id_o.median_ns,
               T->id_m.median_ns, T->r_id, T->mm_o.median_ns, T->mm_m.median_ns, T->r_mm);
    }
    printf("\n");
    bench_print_footer(stdout);
    printf("\n");
    if (failed) {
        printf("AGREEMENT FAILED (see the table above)\n");
        return 1;
    }
    return 0;
}
