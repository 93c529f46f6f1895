/*
 * test_mujoco_mjcf.c - the library's MJCF export (mbs_model_to_mjcf,
 * `mbsens convert --to mjcf`) loaded by MuJoCo 2.2.2.
 *
 * For the shipped models, test models covering every joint type, random
 * trees and a chain deep enough to be split into included files:
 *   - MuJoCo loads the files, and its joints map onto our coordinates
 *     (mjb_map_init: names, types, sizes);
 *   - the mass matrix T^T M T equals MuJoCo's, and where every force
 *     element carries over (spring-dampers as tendons, joint springs as
 *     joint stiffness) our inverse dynamics equals mj_inverse with its
 *     passive forces on, at random states;
 *   - closed loops: the equality constraints hold in MuJoCo's reference
 *     configuration (efc_pos at qpos0);
 *   - a short simulation: MuJoCo's RK4 from our initial state ends where
 *     ours does;
 *   - the random trees and the chain again with tangent velocities
 *     on every spherical and floating joint (mbs_model_with_velocities; the
 *     map of mjbridge for ball and free joints with tangent velocities), M
 *     and ID at the same bounds, no simulation (the integrators do not take
 *     tangent joints yet).
 *
 * Tolerances. M and ID: both sides evaluate the same rigid-body sums in
 * double precision from the same numbers (17 significant digits in the
 * file; principal inertia axes to round-off): two recursions' round-off,
 * 2 MBS_ROUNDOFF(bodies) relative. On top come the placeholder masses and
 * moments MuJoCo needs on massless moving bodies (write_mjcf.c: mass
 * 1e-12 of the total at a distance <= the model's size L, moment 1e-12
 * total L^2): each changes an entry of M by <= 2e-12 total L^2, and M's
 * largest entry (the root joint's, carrying the rest of the tree) is at
 * least total L^2 / 5 for these models: 1e-11 per placeholder
 * (mbs_mjcf.nfilled). Closed loops: the model's initial configuration is
 * assembled to its tolerance (1e-10 by default, a residual in length
 * units), which is the violation MuJoCo sees at qpos0; 10 times that
 * allows the written 17 digits and MuJoCo's own evaluation of the rows.
 * The simulation: MuJoCo's RK4 and ours are both RK4 of the same ODE; the
 * test bounds their difference by twice the global error of ours, estimated
 * by Richardson extrapolation from steps h and h/2 (|q_h - q_h/2| 16/15),
 * plus 1e-10 for round-off.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mjbridge.h"
#include "random_model.h"
#include "testutil.h"

#define NSTATES 4

static char tmpdir[64];

/* write the MJCF of m into tmpdir and load it */
static mjModel *load(const mbs_model *m, const char *label)
{
    mbs_mjcf x;
    mbs_error err = { 0, "" };
    int rc = mbs_model_to_mjcf(m, label, &x, &err);
    CHECK(rc == MBS_OK, "%s: %s", label, err.msg);
    if (rc) return NULL;
    char path[512];
    for (int k = 0; k < x.nfiles; k++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, x.name[k]);
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(x.text[k], f) >= 0 && fclose(f) == 0, "%s: cannot write %s", label, path);
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, x.name[0]);
    char mjerr[1024] = "";
    mjModel *mm = mj_loadXML(path, NULL, mjerr, sizeof mjerr);
    CHECK(mm != NULL, "%s: MuJoCo: %s", label, mjerr);
    for (int k = 0; k < x.nfiles; k++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, x.name[k]);
        unlink(path);
    }
    mbs_mjcf_free(&x);
    return mm;
}

/* M and (with_id) ID at random states; equality constraints off */
static void compare_dynamics(const mjb_map *P, int with_id, const char *label, unsigned long seed)
{
    mbs_mjcf x;
    const double filled = mbs_model_to_mjcf(P->m, label, &x, NULL) == MBS_OK ? x.nfilled : INFINITY;
    if (filled < INFINITY) mbs_mjcf_free(&x);
    const double tol = 2 * MBS_ROUNDOFF(mbs_model_nbodies(P->m)) + 1e-11 * filled;
    const mbs_model *m = P->m;
    mjModel *mm = (mjModel *)P->mm;
    const int nq = P->nq, nv = P->nv;
    int flags = mm->opt.disableflags;
    mm->opt.disableflags |= mjDSBL_EQUALITY | mjDSBL_CONSTRAINT;
    mbs_data *d = mbs_data_create(m, NULL);
    mjData *md = mj_makeData(mm);
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    double *qdd = calloc((size_t)nq, sizeof *qdd), *tau = calloc((size_t)nq, sizeof *tau);
    double *M = calloc((size_t)nq * nq, sizeof *M), *Mc = calloc((size_t)nv * nv, sizeof *Mc);
    double *Mm = calloc((size_t)nv * nv, sizeof *Mm), *tconv = calloc((size_t)nv, sizeof *tconv);
    double *qacc = calloc((size_t)nv, sizeof *qacc);
    mbs_rng r;
    mbs_rng_seed(&r, seed);
    double em = 0, ei = 0;
    for (int s = 0; s < NSTATES; s++) {
        mbs_test_random_state(&r, m, q, qd, qdd);
        if (mbs_model_nv(m) != mbs_model_nq(m)) mbs_normalize_state(m, q, NULL);   /* tangent joints' p */
        mjb_set_state(P, md, q, qd);
        mjb_qacc_from_ours(P, q, qd, qdd, qacc);
        mju_copy(md->qacc, qacc, nv);
        mj_inverse(mm, md);
        mbs_mass_matrix(m, d, q, M);
        mj_fullM(mm, Mm, md->qM);
        mjb_mass_to_mj(P, q, M, Mc);
        em = fmax(em, mjb_relerr(Mc, Mm, nv * nv));
        if (!with_id) continue;
        CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "%s: %s", label, mbs_data_error(d));
        mjb_force_to_mj(P, q, tau, tconv);
        ei = fmax(ei, mjb_relerr(tconv, md->qfrc_inverse, nv));
    }
    CHECK(em <= tol, "%s: mass matrices differ by %.3g (bound %.2g)", label, em, tol);
    CHECK(ei <= tol, "%s: inverse dynamics differ by %.3g (bound %.2g)", label, ei, tol);
    printf("%-24s nq %3d nv %3d  M %.2e  ID %s%.2e\n", label, nq, nv, em, with_id ? "" : "(not compared) ", ei);
    free(q); free(qd); free(qdd); free(tau); free(M); free(Mc); free(Mm); free(tconv); free(qacc);
    mj_deleteData(md);
    mbs_data_free(d);
    mm->opt.disableflags = flags;
}

/* closed loops: the equality rows vanish at MuJoCo's reference configuration */
static void check_loops(const mjModel *mm, const char *label, double size)
{
    mjData *md = mj_makeData(mm);
    mj_forward(mm, md);
    double worst = 0;
    for (int k = 0; k < md->nefc; k++)
        if (md->efc_type[k] == mjCNSTR_EQUALITY) worst = fmax(worst, fabs(md->efc_pos[k]));
    CHECK(mm->neq > 0 && worst <= 10 * 1e-10 * size, "%s: %d equalities, largest violation %.3g at qpos0", label, mm->neq,
          worst);
    printf("%-24s %d equalities, violation at qpos0 %.2e\n", label, mm->neq, worst);
    mj_deleteData(md);
}

/* our RK4 from the initial state to tf with step h: q at tf into qf */
static int our_run(const mbs_model *m, double h, double tf, double *qf)
{
    mbs_sim_options o = mbs_model_sim_options(m);
    o.integrator = MBS_INTEGRATOR_RK4;
    o.dt = h;
    o.tf = tf;
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    mbs_integrator *it = d ? mbs_integrator_create(m, d, &o, &err) : NULL;
    int rc = it ? mbs_integrator_reset(it, 0, NULL, NULL, &err) : -1;
    for (int s = 0; rc == 0 && s < (int)lround(tf / h); s++) rc = mbs_integrator_step(it, h, &err);
    if (rc == 0) memcpy(qf, mbs_integrator_q(it), sizeof *qf * (size_t)mbs_model_nq(m));
    mbs_integrator_free(it);
    mbs_data_free(d);
    return rc;
}

static void compare_run(const mjb_map *P, const char *label, double h, double tf)
{
    const mbs_model *m = P->m;
    mjModel *mm = (mjModel *)P->mm;
    const int nq = P->nq;
    double *q0 = calloc((size_t)nq, sizeof *q0), *qd0 = calloc((size_t)nq, sizeof *qd0);
    double *q1 = calloc((size_t)nq, sizeof *q1), *q2 = calloc((size_t)nq, sizeof *q2);
    CHECK(our_run(m, h, tf, q1) == 0 && our_run(m, h / 2, tf, q2) == 0, "%s: our run failed", label);
    mbs_model_initial_state(m, q0, qd0);
    mjData *md = mj_makeData(mm);
    mm->opt.integrator = mjINT_RK4;
    mm->opt.timestep = h;
    mjb_set_state(P, md, q0, qd0);
    for (int s = 0; s < (int)lround(tf / h); s++) mj_step(mm, md);
    double est = 0, diff = 0;
    for (int k = 0; k < nq; k++) {
        est = fmax(est, fabs(q1[k] - q2[k]) * 16 / 15);
        diff = fmax(diff, fabs(md->qpos[k] - q1[k]));
    }
    CHECK(diff <= 2 * est + 1e-10, "%s: after %g s MuJoCo's RK4 differs from ours by %.3g (our error ~%.3g)", label,
          tf, diff, est);
    printf("%-24s RK4 h %g to %g s: |q_mj - q| %.2e (our global error ~%.2e)\n", label, h, tf, diff, est);
    mj_deleteData(md);
    free(q0); free(qd0); free(q1); free(q2);
}

typedef struct { const char *file; int id; int loops; int run; } shipped;

static void one_model(const mbs_model *m, const char *label, int id, int loops, int run, unsigned long seed);

/* the copy of m with tangent velocities on every spherical and floating
 * joint, checked like m but without the simulation (the integrators do not
 * take tangent joints yet) */
static void tangent_copy(const mbs_model *m, const char *label, int id, unsigned long seed)
{
    mbs_error err = { 0, "" };
    mbs_model *mt = mbs_model_with_velocities(m, MBS_VELOCITIES_TANGENT, &err);
    CHECK(mt != NULL, "%s: tangent copy: %s", label, err.msg);
    char tl[96];
    snprintf(tl, sizeof tl, "%s_tangent", label);
    if (mt) one_model(mt, tl, id, 0, 0, seed);
    mbs_model_free(mt);
}

static void one_model(const mbs_model *m, const char *label, int id, int loops, int run, unsigned long seed)
{
    mjModel *mm = load(m, label);
    if (!mm) return;
    mjb_map P;
    CHECK(mjb_map_init(&P, m, mm, label) == 0, "%s: joints do not match", label);
    if (P.j) {
        compare_dynamics(&P, id, label, seed);
        if (loops) check_loops(mm, label, 1);
        if (run) compare_run(&P, label, 1e-3, 0.5);
    }
    mjb_map_free(&P);
    mj_deleteModel(mm);
}

/* `mbsens convert --to mjcf` writes what the library does */
static void check_cli(void)
{
    const char *cli = getenv("MBS_CLI");
    if (!cli) return;
    char cmd[8192], path[512];
    snprintf(path, sizeof path, "%s/h43.xml", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' convert '%s' --to mjcf -o '%s' 2>/dev/null", cli,
             mbs_test_path("models/human43.json"), path);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    char mjerr[1024] = "";
    mjModel *mm = mj_loadXML(path, NULL, mjerr, sizeof mjerr);
    CHECK(mm != NULL, "CLI output: MuJoCo: %s", mjerr);
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), NULL);
    mjb_map P;
    if (mm && m && mjb_map_init(&P, m, mm, "cli human43") == 0) compare_dynamics(&P, 1, "cli human43", 7);
    mjb_map_free(&P);
    mbs_model_free(m);
    if (mm) mj_deleteModel(mm);
    unlink(path);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mbs_mjcf_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    static const shipped models[] = {
        { "models/double_pendulum.json", 1, 0, 1 },   { "models/human43.json", 1, 0, 1 },
        { "models/fivebar.json", 1, 1, 0 },           { "models/slider_crank.json", 1, 1, 0 },
        { "models/quarter_car.json", 1, 1, 0 },       { "models/fourbar_redundant.json", 1, 1, 0 },
        { "models/halfcar_step.json", 0, 0, 0 },      { "models/bicycle.json", 0, 0, 0 },
        { "tests/models/tree_unordered.json", 1, 0, 0 }, { "tests/models/spring_tree.json", 0, 0, 0 },
    };
    for (int k = 0; k < (int)(sizeof models / sizeof models[0]); k++) {
        mbs_error err = { 0, "" };
        mbs_model *m = mbs_model_load(mbs_test_path(models[k].file), &err);
        CHECK(m != NULL, "%s: %s", models[k].file, err.msg);
        if (!m) continue;
        const char *label = strrchr(models[k].file, '/') + 1;
        char base[64];
        snprintf(base, sizeof base, "%.*s", (int)(strchr(label, '.') - label), label);
        one_model(m, base, models[k].id, models[k].loops, models[k].run, 100 + (unsigned long)k);
        mbs_model_free(m);
    }
    /* force elements that carry over: a spring-damper to the ground (a
     * tendon) and a joint spring with damping on a cylindrical joint's
     * rotation, away from their free lengths */
    {
        static const char *json =
            "{\"name\": \"springs\", \"gravity\": [0, 0, -9.81], \"bodies\": ["
            "{\"name\": \"a\", \"mass\": 2, \"com\": [0.3, 0, 0], \"inertia\": [0.02, 0.05, 0.06, 0.001, 0, 0],"
            " \"points\": {\"tip\": [0.6, 0.1, 0]}},"
            "{\"name\": \"b\", \"mass\": 1, \"com\": [0.2, 0, 0.1], \"inertia\": [0.01, 0.02, 0.02, 0, 0, 0]}],"
            "\"joints\": ["
            "{\"name\": \"ja\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"a\","
            " \"axis\": [0, 1, 0], \"q0\": [0.3]},"
            "{\"name\": \"jb\", \"type\": \"cylindrical\", \"parent\": \"a\", \"child\": \"b\","
            " \"parent_point\": [0.6, 0, 0], \"axis\": [1, 0, 0], \"q0\": [0.05, -0.4]}],"
            "\"forces\": ["
            "{\"name\": \"s1\", \"type\": \"spring_damper\", \"body1\": \"ground\", \"point1\": [0, 0.2, 0.5], \"point2\": \"a.tip\","
            " \"stiffness\": 300, \"damping\": 7, \"length\": 0.4},"
            "{\"name\": \"s2\", \"type\": \"joint_spring\", \"joint\": \"jb\", \"coordinate\": \"theta\","
            " \"stiffness\": 40, \"damping\": 3, \"position\": 0.2}]}";
        mbs_error e;
        mbs_model *m = mbs_model_load_string(json, "springs.json", &e);
        CHECK(m != NULL, "springs: %s", e.msg);
        if (m) one_model(m, "springs", 1, 0, 1, 400);
        mbs_model_free(m);
    }
    /* random trees: every joint type but floating (MuJoCo's free joints are top level) */
    mbs_rng r;
    mbs_rng_seed(&r, 42);
    for (int t = 0; t < 4; t++) {
        mbs_model *m = mbs_test_random_tree(&r, 8 + 4 * t, ~(1u << MBS_JOINT_FLOATING));
        char label[32];
        snprintf(label, sizeof label, "random_tree_%d", t);
        if (m) one_model(m, label, 1, 0, 0, 200 + (unsigned long)t);
        if (m) tangent_copy(m, label, 1, 600 + (unsigned long)t);
        mbs_model_free(m);
    }
    /* a chain split into included files */
    mbs_error err;
    char *json = mbs_generate_chain_json(120, MBS_JOINT_SPHERICAL, 1, &err);
    mbs_model *m = json ? mbs_model_load_string(json, "chain120", &err) : NULL;
    CHECK(m != NULL, "chain120: %s", err.msg);
    if (m) {
        mbs_mjcf x;
        CHECK(mbs_model_to_mjcf(m, "chain120", &x, &err) == MBS_OK && x.nfiles == 3, "chain120: %d files",
              x.nfiles);
        mbs_mjcf_free(&x);
        one_model(m, "chain120", 1, 0, 0, 300);
        tangent_copy(m, "chain120", 1, 700);
    }
    mbs_model_free(m);
    free(json);
    check_cli();
    rmdir(tmpdir);
    return mbs_test_summary("test_mujoco_mjcf");
}
