/*
 * bench_large_tree.c - a robot plus N free bodies (mbs_generate_free_bodies_json;
 * N = 10, 100, 1000): the large branched model of issue 21's sparse-tree
 * targets. Ours: the fully recursive FD, the ID (Newton-Euler), the dense
 * mass matrix (composite inertias), the semi-recursive FD (dense M and a
 * dense Cholesky; not run above 2000 coordinates, where one call takes
 * seconds), the sparse mass matrix (mbs_mass_matrix_sparse, the tree
 * storage of mbsens/sparse.h) alone and with its factorization
 * M = L^T D L (after adding p p^T on each Euler-parameter quadruple, as the
 * FD derivatives do, since the Euler-rate M is singular along p).
 * MuJoCo 2.2.2 on the MJCF written from the same model
 * (mjb_load_mjcf), as in bench_mujoco_robots: mj_forward;
 * mj_kinematics + mj_comPos + mj_comVel + mj_rne; mj_kinematics + mj_comPos
 * + mj_crb + mj_factorM. ns/call (median), ratios ours / MuJoCo as medians
 * of per-repetition ratios of interleaved timings (bench_common.h).
 *
 * The robot: simple_humanoid.urdf on a floating base (balanceinertia, as
 * bench_mujoco_robots) from ../shared/data/example-robot-data or
 * $MBS_URDF_DIR, else models/human43.json; or the model file given.
 *
 * Usage: bench_large_tree [--quick] [--min-time S] [--reps N] [--clock cpu] [ROBOT]
 * A second table: the state derivatives of the fully recursive FD and of
 * the ID in pattern order (mbs_forward_dynamics_derivatives_sparse,
 * mbs_inverse_dynamics_derivatives_sparse) against the dense functions
 * (up to nv = 1000), ns/call and per (N + 1) bodies.
 *
 * Environment: MBS_BENCH_VELOCITIES=tangent (our kernels on the model's
 * copy with tangent velocities, mbs_model_with_velocities, at the same
 * state: the main table only), MBS_BENCH_TABLE=main|derivatives (that table only),
 * MBS_BENCH_BODIES=N (that N only), MBS_BENCH_PROFILE=K: no
 * timing, every kernel K times per N, for
 *   valgrind --tool=callgrind --toggle-collect='t_*' bench_large_tree
 * (instructions per call: callgrind_annotate --inclusive=yes, divided by K).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_common.h"
#include "mjbridge.h"

#define SEMI_MAX_NQ 2000

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    const mjModel *mm;
    mjData *md;
    const double *q, *qd, *qdd, *tau;
    double *out, *M;
    const mbs_tree_pattern *p;
    double *L;   /* the tree-stored M, then its factor */
    int nquad;   /* the Euler-parameter quadruples (quad_positions) */
    const int *qe, *qpos;
    double *sa, *sb, *sc;   /* derivatives in pattern order, then dense (nv x nv) */
    double *da, *db, *dc;
} tctx;

/* The Euler-parameter quadruples of a model (floating joints: coordinates
 * 3..6; spherical: 0..3) as the tree-storage positions of their lower
 * triangles (row e + r ends with the entries e .. e + r), 10 per
 * quadruple, in the order r, c <= r; found once per model. The count, or
 * -1 (out of memory). */
static int quad_positions(const mbs_model *m, const mbs_tree_pattern *p, int **qe, int **pos)
{
    int n = 0;
    for (int j = 1; j <= mbs_model_nbodies(m); j++) {
        const mbs_joint_type t = mbs_joint_type_of(m, j);
        n += (t == MBS_JOINT_FLOATING || t == MBS_JOINT_SPHERICAL) && mbs_joint_velocities(m, j) != MBS_VELOCITIES_TANGENT;
    }
    *qe = malloc(sizeof(int) * (size_t)(n + 1));
    *pos = malloc(sizeof(int) * (size_t)(10 * n + 1));
    if (!*qe || !*pos) return -1;
    n = 0;
    for (int j = 1; j <= mbs_model_nbodies(m); j++) {
        const mbs_joint_type t = mbs_joint_type_of(m, j);
        if (t != MBS_JOINT_FLOATING && t != MBS_JOINT_SPHERICAL) continue;
        if (mbs_joint_velocities(m, j) == MBS_VELOCITIES_TANGENT) continue;
        const int e = mbs_joint_coord_offset(m, j) + (t == MBS_JOINT_FLOATING ? 3 : 0);
        int *ps = *pos + 10 * n;
        (*qe)[n++] = e;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c <= r; c++) *ps++ = p->rowptr[e + r + 1] - 1 - (r - c);
    }
    return n;
}

/* p p^T added to the tree-stored M on each Euler-parameter quadruple */
static void complete(int nquad, const int *qe, const int *pos, const double *q, double *L)
{
    for (int k = 0; k < nquad; k++, pos += 10) {
        const double *e = q + qe[k];
        int t = 0;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c <= r; c++) L[pos[t++]] += e[r] * e[c];
    }
}

static void t_fd(void *v)
{
    tctx *c = v;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out);
    bench_sink = c->out[0];
}
static void t_id(void *v)
{
    tctx *c = v;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out);
    bench_sink = c->out[0];
}
static void t_mdense(void *v) { tctx *c = v; mbs_mass_matrix(c->m, c->d, c->q, c->M); bench_sink = c->M[0]; }
static void t_semi(void *v)
{
    tctx *c = v;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_SEMI_RECURSIVE, c->q, c->qd, c->tau, c->out);
    bench_sink = c->out[0];
}
static void t_msparse(void *v)
{
    tctx *c = v;
    mbs_mass_matrix_sparse(c->m, c->d, c->q, c->p, c->L);
    bench_sink = c->L[0];
}
static void t_msparse_ltdl(void *v)
{
    tctx *c = v;
    mbs_mass_matrix_sparse(c->m, c->d, c->q, c->p, c->L);
    complete(c->nquad, c->qe, c->qpos, c->q, c->L);
    mbs_tree_factor_ltdl(c->p, c->L, NULL);
    bench_sink = c->L[0];
}
static void t_mj_forward(void *v) { tctx *c = v; mj_forward(c->mm, c->md); bench_sink = c->md->qacc[0]; }
static void t_mj_rne(void *v)
{
    tctx *c = v;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_comVel(c->mm, c->md);
    mj_rne(c->mm, c->md, 1, c->out);
    bench_sink = c->out[0];
}
static void t_mj_crb(void *v)
{
    tctx *c = v;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_crb(c->mm, c->md); mj_factorM(c->mm, c->md);
    bench_sink = c->md->qLD[0];
}

enum { K_FD, K_ID, K_M, K_SEMI, K_MSP, K_LTDL, K_MJFWD, K_MJRNE, K_MJCRB, NK };
static const char *const KNAME[NK] = { "FD", "ID", "M", "semi", "M sparse", "+LTDL", "mj_forward", "mj_rne",
                                       "crb+fac" };
/* the ratios: FD / mj_forward, ID / MuJoCo's RNE, M / MuJoCo's CRB +
 * factor, sparse M + LTDL / the same, semi / FD */
#define NPAIR 5
static const int PAIR[NPAIR][2] = { { K_FD, K_MJFWD }, { K_ID, K_MJRNE }, { K_M, K_MJCRB }, { K_LTDL, K_MJCRB },
                                    { K_SEMI, K_FD } };

/* one N: the model, MuJoCo's, the kernels; ns[k] (0: not run) and the
 * ratios ours / MuJoCo; 0, or -1 on failure */
static int run(const mbs_model *robot, int nb, int tangent, long profile, double ns[NK], double ratio[NPAIR],
               int *nq_out, int *nv_out)
{
    mbs_error err;
    char label[64], mjerr[1024] = "";
    snprintf(label, sizeof label, "free_bodies_%d", nb);
    char *text = mbs_generate_free_bodies_json(robot, nb, &err);
    mbs_model *m = text ? mbs_model_load_string(text, label, &err) : NULL;
    free(text);
    if (!m) { fprintf(stderr, "%s: %s\n", label, err.msg); return -1; }
    mjModel *mm = mjb_load_mjcf(m, label, mjerr, sizeof mjerr);
    mjb_map P;
    if (!mm || mjb_map_init(&P, m, mm, label) != 0) {
        fprintf(stderr, "%s: %s\n", label, mjerr);
        mbs_model_free(m);
        mj_deleteModel(mm);
        return -1;
    }
    const int nq = mbs_model_nq(m), nv = mm->nv;
    *nq_out = nq;
    *nv_out = nv;
    mbs_model *mt = tangent ? mbs_model_with_velocities(m, MBS_VELOCITIES_TANGENT, &err) : NULL;
    if (tangent && !mt) { fprintf(stderr, "%s: %s\n", label, err.msg); exit(2); }
    mbs_tree_pattern pat;
    bench_check(mbs_model_tree_pattern(mt ? mt : m, &pat, &err), NULL, "tree pattern");
    double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq), *qdd = malloc(sizeof(double) * nq);
    double *tau = calloc((size_t)nq, sizeof(double)), *qacc = malloc(sizeof(double) * nv);
    double *out = malloc(sizeof(double) * (nq > nv ? nq : nv)), *M = malloc(sizeof(double) * (size_t)nq * nq);
    double *L = malloc(sizeof(double) * pat.nnz);
    bench_rng rng;
    bench_rng_seed(&rng, 7);
    bench_random_state(m, &rng, 1.0, 1.0, q, qd, qdd);
    double *v = malloc(sizeof(double) * nq), *vd = malloc(sizeof(double) * nq);
    const mbs_model *mo = mt ? mt : m;   /* our kernels' model */
    bench_check(mbs_velocity_from_rates(mo, q, qd, qdd, v, vd), NULL, "velocities");
    mbs_data *d = bench_data(mo);
    bench_check(mbs_mass_matrix(mo, d, q, M), d, "mass matrix");
    int *qe = NULL, *qpos = NULL;
    const int nquad = quad_positions(mo, &pat, &qe, &qpos);
    if (nquad < 0) { fprintf(stderr, "%s: out of memory\n", label); exit(1); }
    bench_check(mbs_mass_matrix_sparse(mo, d, q, &pat, L), d, "sparse mass matrix");
    complete(nquad, qe, qpos, q, L);
    bench_check(mbs_tree_factor_ltdl(&pat, L, &err), NULL, "tree factorization");
    mjData *md[2] = { mj_makeData(mm), mj_makeData(mm) };
    for (int k = 0; k < 2; k++) {
        mjb_set_state(&P, md[k], q, qd);
        mj_forward(mm, md[k]);
    }
    mjb_qacc_from_ours(&P, q, qd, qdd, qacc);
    mju_copy(md[1]->qacc, qacc, nv);   /* md[1]: mj_rne at our qdd */
    tctx c = { mo, d, mm, md[0], q, v, vd, tau, out, M, &pat, L, nquad, qe, qpos, NULL, NULL, NULL, NULL, NULL, NULL },
         cr = c;
    cr.md = md[1];
    const bench_fn fns[NK] = { t_fd, t_id, t_mdense, t_semi, t_msparse, t_msparse_ltdl, t_mj_forward, t_mj_rne,
                               t_mj_crb };
    void *ctx[NK] = { &c, &c, &c, &c, &c, &c, &c, &cr, &c };
    const int semi = nq <= SEMI_MAX_NQ;
    memset(ns, 0, sizeof(double) * NK);
    memset(ratio, 0, sizeof(double) * NPAIR);
    if (profile > 0) {
        for (int k = 0; k < NK; k++)
            if (k != K_SEMI || semi)
                for (long i = 0; i < profile; i++) fns[k](ctx[k]);
    } else {
        /* pairs timed side by side: ours against MuJoCo's, semi against FD;
         * the sparse M alone once */
        ns[K_MSP] = bench_time(t_msparse, &c).median_ns;
        for (int k = 0; k < NPAIR; k++) {
            if (PAIR[k][0] == K_SEMI && !semi) continue;
            const bench_fn f2[2] = { fns[PAIR[k][0]], fns[PAIR[k][1]] };
            void *c2[2] = { ctx[PAIR[k][0]], ctx[PAIR[k][1]] };
            bench_result res[2];
            double rt[2];
            bench_time_many(2, f2, c2, res, rt);
            ns[PAIR[k][0]] = res[0].median_ns;
            if (!ns[PAIR[k][1]]) ns[PAIR[k][1]] = res[1].median_ns;
            ratio[k] = 1 / rt[1];
        }
    }
    mj_deleteData(md[0]);
    mj_deleteData(md[1]);
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(v); free(vd); free(tau); free(qacc); free(out); free(M); free(L); free(qe);
    free(qpos);
    mbs_tree_pattern_free(&pat);
    mjb_map_free(&P);
    mj_deleteModel(mm);
    mbs_model_free(mt);
    mbs_model_free(m);
    return 0;
}

/* ---- derivatives: sparse (mbsens/sparse.h) against dense ---- */
static void t_dfd_sparse(void *v)
{
    tctx *c = v;
    mbs_forward_dynamics_derivatives_sparse(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out, c->sa,
                                            c->sb, c->sc);
    bench_sink = c->sa[0];
}
static void t_dfd_dense(void *v)
{
    tctx *c = v;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out, c->da, c->db,
                                     c->dc);
    bench_sink = c->da[0];
}
static void t_did_sparse(void *v)
{
    tctx *c = v;
    mbs_inverse_dynamics_derivatives_sparse(c->m, c->d, c->q, c->qd, c->qdd, c->out, c->sa, c->sb);
    bench_sink = c->sa[0];
}
static void t_did_dense(void *v)
{
    tctx *c = v;
    mbs_inverse_dynamics_derivatives(c->m, c->d, c->q, c->qd, c->qdd, c->out, c->da, c->db);
    bench_sink = c->da[0];
}

/* The dense derivatives are run up to this size (three nv^2 outputs and
 * O(nv^3) products at most) */
#define DENSE_DERIV_MAX_NV 1000

enum { D_FDS, D_FDD, D_IDS, D_IDD, ND };
static const char *const DNAME[ND] = { "dFD sparse", "dFD dense", "dID sparse", "dID dense" };

/* one N: ns[k] of the derivative kernels (0: not run); 0 or -1 */
static int run_derivatives(const mbs_model *robot, int nb, long profile, double ns[ND], int *nv_out, int *nnz)
{
    mbs_error err;
    char label[64];
    snprintf(label, sizeof label, "free_bodies_%d", nb);
    char *text = mbs_generate_free_bodies_json(robot, nb, &err);
    mbs_model *m = text ? mbs_model_load_string(text, label, &err) : NULL;
    free(text);
    if (!m) { fprintf(stderr, "%s: %s\n", label, err.msg); return -1; }
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m), dense = nv <= DENSE_DERIV_MAX_NV;
    const int nid = mbs_sparsity_nnz(m, MBS_SPARSITY_ID), nfd = mbs_sparsity_nnz(m, MBS_SPARSITY_FD);
    const size_t ns1 = (size_t)(nid > nfd ? nid : nfd), nn = dense ? (size_t)nv * nv : 1;
    *nv_out = nv;
    nnz[0] = nid;
    nnz[1] = nfd;
    double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nv), *qdd = malloc(sizeof(double) * nv);
    double *tau = calloc((size_t)nv, sizeof(double)), *out = malloc(sizeof(double) * nv);
    tctx c = { 0 };
    c.sa = malloc(sizeof(double) * ns1); c.sb = malloc(sizeof(double) * ns1); c.sc = malloc(sizeof(double) * ns1);
    c.da = malloc(sizeof(double) * nn); c.db = malloc(sizeof(double) * nn); c.dc = malloc(sizeof(double) * nn);
    bench_rng rng;
    bench_rng_seed(&rng, 7);
    bench_random_state(m, &rng, 1.0, 1.0, q, qd, qdd);
    mbs_data *d = bench_data(m);
    c.m = m; c.d = d; c.q = q; c.qd = qd; c.qdd = qdd; c.tau = tau; c.out = out;
    bench_check(mbs_forward_dynamics_derivatives_sparse(m, d, MBS_FD_RECURSIVE, q, qd, tau, out, c.sa, c.sb, c.sc),
                d, "sparse FD derivatives");
    bench_check(mbs_inverse_dynamics_derivatives_sparse(m, d, q, qd, qdd, out, c.sa, c.sb), d,
                "sparse ID derivatives");
    const bench_fn fns[ND] = { t_dfd_sparse, t_dfd_dense, t_did_sparse, t_did_dense };
    memset(ns, 0, sizeof(double) * ND);
    for (int k = 0; k < ND; k += 2) {
        if (profile > 0) {
            for (long i = 0; i < profile; i++) fns[k](&c);
            if (dense) for (long i = 0; i < profile; i++) fns[k + 1](&c);
        } else if (dense) {   /* sparse and dense side by side */
            const bench_fn f2[2] = { fns[k], fns[k + 1] };
            void *c2[2] = { &c, &c };
            bench_result res[2];
            double rt[2];
            bench_time_many(2, f2, c2, res, rt);
            ns[k] = res[0].median_ns;
            ns[k + 1] = res[1].median_ns;
        } else {
            ns[k] = bench_time(fns[k], &c).median_ns;
        }
    }
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(tau); free(out);
    free(c.sa); free(c.sb); free(c.sc); free(c.da); free(c.db); free(c.dc);
    mbs_model_free(m);
    return 0;
}

static int derivative_table(const mbs_model *robot, const int *counts, int ncount, long profile)
{
    printf("\n# derivatives: ns/call (median) of the state Jacobians (fully recursive FD: dvd/dq, dvd/dv,\n"
           "# dvd/dtau; ID: dtau/dq, dtau/dv) in pattern order (mbsens/sparse.h) and dense (nv x nv; up to\n"
           "# nv = %d), sparse and dense timed side by side; per body = ns / (N + 1)\n", DENSE_DERIV_MAX_NV);
    printf("| %5s | %5s | %15s |", "N", "nv", "nnz ID / FD");
    for (int k = 0; k < ND; k++) printf(" %10s |", DNAME[k]);
    printf(" dFD sp / body | dID sp / body | dFD dense/sparse | dID dense/sparse |\n|%s\n",
           "---|---|---|---|---|---|---|---|---|---|---|");
    int fails = 0;
    for (int i = 0; i < ncount; i++) {
        double ns[ND];
        int nv = 0, nnz[2] = { 0, 0 };
        if (run_derivatives(robot, counts[i], profile, ns, &nv, nnz) != 0) { fails++; continue; }
        printf("| %5d | %5d | %7d / %5d |", counts[i], nv, nnz[0], nnz[1]);
        for (int k = 0; k < ND; k++) ns[k] > 0 ? printf(" %10.0f |", ns[k]) : printf(" %10s |", "-");
        printf(" %13.0f | %13.0f |", ns[D_FDS] / (counts[i] + 1), ns[D_IDS] / (counts[i] + 1));
        ns[D_FDD] > 0 ? printf(" %16.1f |", ns[D_FDD] / ns[D_FDS]) : printf(" %16s |", "-");
        ns[D_IDD] > 0 ? printf(" %16.1f |\n", ns[D_IDD] / ns[D_IDS]) : printf(" %16s |\n", "-");
        fflush(stdout);
    }
    return fails;
}

/* the robot of the header: a model file, simple_humanoid or human43 */
static mbs_model *load_robot(const char *path, char *name, size_t len)
{
    mbs_error err;
    char dir[4096], file[8192];
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/../shared/data/example-robot-data",
                  getenv("MBS_SOURCE_DIR") ? getenv("MBS_SOURCE_DIR") : MBS_BENCH_SOURCE_DIR);
    snprintf(file, sizeof file, "%s/simple_humanoid.urdf", dir);
    struct stat st;
    mbs_model *m;
    if (!path && stat(file, &st) == 0) {
        mbs_urdf_options o = { 1, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
        m = mbs_model_load_urdf(file, &o, &err);
        snprintf(name, len, "simple_humanoid (floating base)");
    } else {
        path = path ? path : bench_model_path(NULL, "human43.json");
        m = mbs_model_load(path, &err);
        snprintf(name, len, "%s", path);
    }
    if (!m) fprintf(stderr, "bench_large_tree: %s\n", err.msg);
    return m;
}

int main(int argc, char **argv)
{
    const char *robot_path = bench_parse_args(argc, argv, "[ROBOT]");
    char name[256];
    mbs_model *robot = load_robot(robot_path, name, sizeof name);
    if (!robot) return 2;
    const char *prof = getenv("MBS_BENCH_PROFILE"), *one = getenv("MBS_BENCH_BODIES");
    const char *which = getenv("MBS_BENCH_TABLE");   /* "derivatives": that table only; "main": the first only */
    const long profile = prof && *prof ? atol(prof) : 0;
    const char *vel = getenv("MBS_BENCH_VELOCITIES");
    const int tangent = vel && !strcmp(vel, "tangent");
    int counts[3] = { 10, 100, 1000 }, ncount = 3;
    if (one && *one) counts[0] = atoi(one), ncount = 1;
    if (bench_cfg.quick && ncount == 3) ncount = 1;
    bench_print_machine(stdout, "# ");
    printf("# robot: %s (nq %d), plus N free bodies on floating joints; ours in %s\n", name, mbs_model_nq(robot),
           tangent ? "tangent velocities" : "Euler rates");
    const int main_table = !(which && !strcmp(which, "derivatives"));
    if (main_table) {
        printf("# ns/call (median); ratios ours / MuJoCo 2.2.2 (and semi / FD), medians of interleaved repetitions\n");
        printf("| %5s | %11s |", "N", "nq / nv");
        for (int k = 0; k < NK; k++) printf(" %10s |", KNAME[k]);
        printf(" FD/fwd | ID/rne | M/crb | M sparse+LTDL/crb | semi/FD |\n|%s\n",
               "---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    }
    int fails = 0;
    for (int i = 0; i < ncount && main_table; i++) {
        double ns[NK], ratio[NPAIR];
        int nq = 0, nv = 0;
        if (run(robot, counts[i], tangent, profile, ns, ratio, &nq, &nv) != 0) { fails++; continue; }
        printf("| %5d | %5d / %4d |", counts[i], nq, nv);
        for (int k = 0; k < NK; k++) ns[k] > 0 ? printf(" %10.0f |", ns[k]) : printf(" %10s |", "-");
        for (int k = 0; k < NPAIR; k++) ratio[k] > 0 ? printf(" %6.2f |", ratio[k]) : printf(" %6s |", "-");
        printf("\n");
        fflush(stdout);
    }
    if (!(which && !strcmp(which, "main")) && !tangent) fails += derivative_table(robot, counts, ncount, profile);
    bench_print_footer(stdout);
    mbs_model_free(robot);
    return fails ? 1 : 0;
}
