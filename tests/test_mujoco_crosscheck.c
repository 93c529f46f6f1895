/*
 * test_mujoco_crosscheck.c - the 16 example robots loaded by our URDF loader
 * and by MuJoCo 2.2.2's own URDF compiler agree: inverse dynamics, mass
 * matrix and forward dynamics at random states, coordinates matched by
 * joint name. Differences are relative (max |a - b| / max |b|) and bounded
 * by round-off: two recursions over the tree, 2 MBS_ROUNDOFF(bodies), for
 * inverse dynamics and the mass matrix; forward dynamics adds the forward
 * error of a backward-stable solve with M on both sides, 2 n eps kappa(M)
 * (the recursions and the solves are backward stable: their round-off acts
 * like a perturbation of the state and the inertias). Built only
 * where MuJoCo is found (tests/CMakeLists.txt); the library never links it.
 *
 * What MuJoCo loads is a copy of each URDF written by mjb_write_urdf_copy
 * (mjbridge/mjbridge.h): no visual or collision geometry, every <inertial>
 * in principal axes (MuJoCo 2.2.2's conversion of a full inertia, mju_eig3,
 * stops early: ~1e-7 relative on hyq and a1), balanceinertia on, and
 * fusestatic off, because the fused inertias would be re-diagonalized the
 * same way (2.8e-7 on icub); links fixed to each other stay separate welded
 * bodies, the same dynamics as our merged bodies.
 *   - icub_reduced only: MuJoCo 2.2.2 rejects moving bodies without
 *     rotational inertia ("mass and inertia of moving bodies must be larger
 *     than mjMINVAL": r_hip_1 and others are point masses), so in its copy
 *     every point mass gets the isotropic inertia m (1e-4 m)^2, and our
 *     side loads that same copy (the floating joint included);
 *   - floating base: a link "world" (MuJoCo's name for the world body) and
 *     a floating joint "root_joint" from it to the root link, i.e. MuJoCo's
 *     free joint; our side loads the original file with floating_base = 1.
 *     ur5_robot's root link already is "world": it has no floating case.
 * Links whose inertia violates the triangle inequality (anymal, hyq,
 * icub, pr2, romeo, talos_reduced) are rebalanced on both sides (MuJoCo's
 * balanceinertia; our balance_inertia: each principal moment replaced by
 * their mean).
 * MuJoCo options: contacts, limits, equality, friction loss, passive forces
 * (URDF <dynamics> damping) and the whole constraint solver disabled;
 * armature, damping and friction loss set to zero (mjb_disable_extras).
 *
 * Frame Jacobians (mbs_frame_jacobian, world axes) at every body's CoM
 * against mj_jac at that point of the MuJoCo body of the same name, and the
 * centre-of-mass Jacobian against mj_jacSubtreeCom of the world body (times
 * the masses: a fixed base counts in MuJoCo's world subtree only), both
 * as J T (columns of MuJoCo's velocities), within the same round-off bound
 * as inverse dynamics (a sum along the path, products of lever arms and
 * axes).
 *
 * States, accelerations, forces and mass matrices are converted by the
 * joint map of mjbridge (coordinates matched by joint name; the free joint
 * has 7 coordinates here, 6 velocities in MuJoCo: qd = T v, tau_mj = T^T tau,
 * M_mj = T^T M T). Every floating base is checked twice: in Euler-parameter
 * rates (7 velocities) and in its copy with tangent velocities
 * (mbs_model_with_velocities: 6 velocities, the body twist, T = diag(Xp R,
 * Xc) up to the lever arm of the child joint point), at the same bounds.
 *
 * $MBS_URDF_DIR (default ../shared/data/example-robot-data relative to the
 * source directory); exit 77 (skipped) if absent.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mjbridge.h"
#include "testutil.h"

#define NSTATES 5

static const char *const ROBOTS[] = {
    "a1.urdf", "anymal.urdf", "baxter.urdf", "double_pendulum.urdf", "go2.urdf", "hyq_no_sensors.urdf",
    "icub_reduced.urdf", "kinova.urdf", "panda.urdf", "pr2.urdf", "romeo_small.urdf", "simple_humanoid.urdf",
    "solo12.urdf", "talos_full_v2.urdf", "talos_reduced.urdf", "ur5_robot.urdf",
};
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))
/* fixed base; floating base in Euler-parameter rates; the same with tangent velocities */
static const char *const BASES[] = { "fixed", "floating", "float-tg" };

static double urand(unsigned long *s, double lo, double hi)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* ---------------------------------------------------------------- one robot, one base */

/* worst differences, and worst differences as fractions of their bounds */
typedef struct { double id, mm, fd, wid, wmm, wfd, cond, jac, wjac; } worst;

/* Frame Jacobians at the bodies' CoMs and the CoM Jacobian, ours times T
 * (qd = T v, T: nvo x nv, row-major) against MuJoCo's: the worst relative
 * difference. The kinematics of both sides at the state are in d and md. */
static double compare_jacobians(const mjb_map *P, mbs_data *d, mjData *md, const double *T)
{
    const mbs_model *m = P->m;
    const int nq = P->nvo, nv = P->nv, nb = mbs_model_nbodies(m);   /* nq: our velocities */
    double *J = calloc((size_t)6 * nq, sizeof *J), *JT = calloc((size_t)6 * nv, sizeof *JT);
    double *Jm = calloc((size_t)6 * nv, sizeof *Jm), worst = 0;
    int matched = 0;
    for (int b = 0; b <= nb; b++) {
        const int mb = mj_name2id(P->mm, mjOBJ_BODY, b ? mbs_body_name(m, b) : "world");
        if (b > 0 && mb < 0) continue;
        matched += b > 0;
        double com[3], I6[6], rG[3];
        if (b > 0) {
            mbs_body_inertia(m, b, com, I6);
            mbs_body_com(d, b, rG);
            CHECK(mbs_frame_jacobian(m, d, b, com, MBS_AXES_WORLD, J) == MBS_OK, "%s", mbs_data_error(d));
            mj_jac(P->mm, md, Jm, Jm + 3 * nv, rG, mb);
        } else {
            /* the momenta m J_G: MuJoCo's world subtree also holds the mass
             * of a fixed base, which our loader merges into the ground */
            double mt = 0;
            for (int i = 1; i <= nb; i++) mt += mbs_body_mass(m, i);
            CHECK(mbs_com_jacobian(m, d, J) == MBS_OK, "%s", mbs_data_error(d));
            mj_jacSubtreeCom(P->mm, md, Jm, 0);
            for (int k = 0; k < 3 * nq; k++) J[k] *= mt;
            for (int k = 0; k < 3 * nv; k++) Jm[k] *= P->mm->body_subtreemass[0];
        }
        const int rows = b ? 6 : 3;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < nv; c++) {
                double s = 0;
                for (int k = 0; k < nq; k++) s += J[r * nq + k] * T[k * nv + c];
                JT[r * nv + c] = s;
            }
        worst = fmax(worst, mjb_relerr(JT, Jm, rows * nv));
    }
    CHECK(matched == nb, "%s bodies of ours found in MuJoCo's model: %d of %d", mbs_model_name(m), matched, nb);
    free(J); free(JT); free(Jm);
    return worst;
}

static int compare(const mjb_map *P, unsigned long seed, worst *W)
{
    const mbs_model *m = P->m;
    const mjModel *mm = P->mm;
    const int nq = P->nq, nv = P->nv;
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    mjData *md = mj_makeData(mm);
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    double *qdd = calloc((size_t)nq, sizeof *qdd), *tau = calloc((size_t)nq, sizeof *tau);
    double *qacc = calloc((size_t)nv, sizeof *qacc), *tmj = calloc((size_t)nv, sizeof *tmj);
    double *tconv = calloc((size_t)nv, sizeof *tconv), *aconv = calloc((size_t)nv, sizeof *aconv);
    double *M = calloc((size_t)nq * nq, sizeof *M), *Mc = calloc((size_t)nv * nv, sizeof *Mc);
    double *Mm = calloc((size_t)nv * nv, sizeof *Mm), *zero = calloc((size_t)nq, sizeof *zero);
    int rc = 0;
    const double ro = 2 * MBS_ROUNDOFF(mbs_model_nbodies(m));
    W->id = W->mm = W->fd = W->wid = W->wmm = W->wfd = W->cond = W->jac = W->wjac = 0;
    double *T = calloc((size_t)nq * nv, sizeof *T), *ek = calloc((size_t)nv, sizeof *ek);
    for (int s = 0; s < NSTATES && rc == 0; s++) {
        /* random state: coordinates, and velocities from random MuJoCo
         * velocities (qd = T v: tangent to |p| = 1) */
        for (int k = 0; k < P->nj; k++) {
            const mjb_joint *j = &P->j[k];
            if (j->type == MBS_JOINT_FLOATING) {
                double n = 0;
                for (int c = 0; c < 3; c++) q[j->qoff + c] = urand(&seed, -1, 1);
                for (int c = 0; c < 4; c++) {
                    q[j->qoff + 3 + c] = urand(&seed, -1, 1);
                    n += q[j->qoff + 3 + c] * q[j->qoff + 3 + c];
                }
                for (int c = 0; c < 4; c++) q[j->qoff + 3 + c] /= sqrt(n);
            } else {
                q[j->qoff] = urand(&seed, -3, 3);
            }
        }
        for (int k = 0; k < nv; k++) qacc[k] = urand(&seed, -2, 2);   /* the velocity, first */
        mjb_qdd_from_mj(P, q, zero, qacc, qd);   /* qd = T v (at zero rates: no p |pd|^2 term) */
        for (int k = 0; k < nv; k++) {
            qacc[k] = urand(&seed, -3, 3);
            tmj[k] = urand(&seed, -10, 10);
        }
        mjb_set_state(P, md, q, qd);

        /* ID: mj_inverse at qacc vs ours at the same acceleration */
        mju_copy(md->qacc, qacc, nv);
        mj_inverse(mm, md);
        mjb_qdd_from_mj(P, q, qd, qacc, qdd);
        if (mbs_inverse_dynamics(m, d, q, qd, qdd, tau) != MBS_OK) {
            fprintf(stderr, "inverse dynamics: %s\n", mbs_data_error(d));
            rc = -1;
            break;
        }
        mjb_force_to_mj(P, q, tau, tconv);
        double e = mjb_relerr(tconv, md->qfrc_inverse, nv);
        W->id = fmax(W->id, e);
        W->wid = fmax(W->wid, e / ro);

        /* mass matrix: T^T M T vs mj_fullM */
        mbs_mass_matrix(m, d, q, M);
        mj_fullM(mm, Mm, md->qM);
        mjb_mass_to_mj(P, q, M, Mc);
        e = mjb_relerr(Mc, Mm, nv * nv);
        W->mm = fmax(W->mm, e);
        W->wmm = fmax(W->wmm, e / ro);
        /* MuJoCo's M: in velocities, regular also with a floating base (ours has 4 quaternion coordinates) */
        const double cond = mbs_test_cond_spd(Mm, nv);
        W->cond = fmax(W->cond, cond);

        /* FD: mj_forward with qfrc_applied = tau_mj vs ours */
        mju_copy(md->qfrc_applied, tmj, nv);
        mj_forward(mm, md);
        mjb_force_from_mj(P, q, tmj, tau);
        if (mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, qdd) != MBS_OK) {
            fprintf(stderr, "forward dynamics: %s\n", mbs_data_error(d));
            rc = -1;
            break;
        }
        mjb_qacc_from_ours(P, q, qd, qdd, aconv);
        e = mjb_relerr(aconv, md->qacc, nv);
        W->fd = fmax(W->fd, e);
        W->wfd = fmax(W->wfd, e / (ro + 2 * nv * MBS_EPS * cond));

        /* Jacobians: T column by column (qd = T e_k), then J T */
        for (int k = 0; k < nv; k++) {
            ek[k] = 1;
            mjb_qdd_from_mj(P, q, zero, ek, qdd);
            ek[k] = 0;
            for (int i = 0; i < P->nvo; i++) T[i * nv + k] = qdd[i];
        }
        if (mbs_kinematics(m, d, q, qd, NULL) != MBS_OK) {
            fprintf(stderr, "kinematics: %s\n", mbs_data_error(d));
            rc = -1;
            break;
        }
        e = compare_jacobians(P, d, md, T);
        W->jac = fmax(W->jac, e);
        W->wjac = fmax(W->wjac, e / ro);
    }
    free(T); free(ek);
    free(q); free(qd); free(qdd); free(tau); free(qacc); free(tmj); free(tconv); free(aconv);
    free(M); free(Mc); free(Mm); free(zero);
    mj_deleteData(md);
    mbs_data_free(d);
    return rc;
}

int main(void)
{
    char dir[4096];
    if (mbs_test_urdf_dir(dir, sizeof dir) != 0) {
        printf("test_mujoco_crosscheck: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 77;
    }
    char tmpdir[] = "/tmp/mbs_mjcheck_XXXXXX";
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    printf("%-22s %-8s %4s %4s  %-9s %-9s %-9s %-9s %-9s  %s\n", "robot", "base", "nq", "nv", "ID", "M", "FD", "J",
           "cond(M)", "fractions of the bounds");
    for (int r = 0; r < NROBOTS; r++) {
        char src[8192], dst[8192];
        snprintf(src, sizeof src, "%s/%s", dir, ROBOTS[r]);
        snprintf(dst, sizeof dst, "%s/%s", tmpdir, ROBOTS[r]);
        for (int base = 0; base <= 2; base++) {
            const int floating = base > 0, tangent = base == 2;
            const char *base_name = BASES[base];
            if (floating && strcmp(ROBOTS[r], "ur5_robot.urdf") == 0) continue;   /* root link is "world" */
            const int icub = strcmp(ROBOTS[r], "icub_reduced.urdf") == 0;
            CHECK(mjb_write_urdf_copy(src, dst, floating, icub, 0) == 0, "%s: cannot write the MuJoCo copy",
                  ROBOTS[r]);
            char mjerr[1024] = "";
            mjModel *mm = mj_loadXML(dst, NULL, mjerr, sizeof mjerr);
            CHECK(mm != NULL, "%s: MuJoCo: %s", ROBOTS[r], mjerr);
            if (!mm) continue;
            mjb_disable_extras(mm);
            /* icub: both sides load the copy (its point masses have an inertia, see above) */
            mbs_urdf_options o = { floating && !icub, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
            mbs_error err = { 0, "" };
            mbs_model *m = mbs_model_load_urdf(icub ? dst : src, &o, &err);
            if (!getenv("MBS_KEEP_MJ_URDF")) unlink(dst);
            CHECK(m != NULL, "%s: %s", ROBOTS[r], err.msg);
            if (m && tangent) {
                mbs_model *mt = mbs_model_with_velocities(m, MBS_VELOCITIES_TANGENT, &err);
                CHECK(mt != NULL, "%s: tangent copy: %s", ROBOTS[r], err.msg);
                mbs_model_free(m);
                m = mt;
            }
            mjb_map P;
            if (m && mjb_map_init(&P, m, mm, ROBOTS[r]) == 0) {
                worst W;
                int rc = compare(&P, 1234 + (unsigned long)r, &W);
                CHECK(rc == 0, "%s: comparison failed", ROBOTS[r]);
                CHECK(W.wid <= 1, "%s (%s): inverse dynamics differ by %.3g, %.3g of the round-off bound",
                      ROBOTS[r], base_name, W.id, W.wid);
                CHECK(W.wmm <= 1, "%s (%s): mass matrices differ by %.3g, %.3g of the round-off bound", ROBOTS[r],
                      base_name, W.mm, W.wmm);
                CHECK(W.wjac <= 1, "%s (%s): Jacobians differ by %.3g, %.3g of the round-off bound", ROBOTS[r],
                      base_name, W.jac, W.wjac);
                CHECK(W.wfd <= 1, "%s (%s): forward dynamics differ by %.3g, %.3g of the round-off bound",
                      ROBOTS[r], base_name, W.fd, W.wfd);
                printf("%-22s %-8s %4d %4d  %-9.2e %-9.2e %-9.2e %-9.2e %-9.2e  %.1e %.1e %.1e %.1e\n", ROBOTS[r],
                       base_name, P.nq, P.nv, W.id, W.mm, W.fd, W.jac, W.cond, W.wid, W.wmm,
                       W.wfd, W.wjac);
            } else if (m) {
                CHECK(0, "%s: joints do not match", ROBOTS[r]);
            }
            mjb_map_free(&P);
            mbs_model_free(m);
            mj_deleteModel(mm);
        }
    }
    rmdir(tmpdir);
    return mbs_test_summary("test_mujoco_crosscheck");
}
