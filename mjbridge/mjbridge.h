/*
 * mjbridge.h - the same multibody system in mbsens and in MuJoCo 2.2.2, for
 * the cross-check test (tests/test_mujoco_crosscheck.c) and the benchmarks
 * against MuJoCo (bench/bench_mujoco_*.c). Never part of the library: only
 * those programs link it (and MuJoCo).
 *
 * Two ways to give MuJoCo a model:
 *   - mjb_load_mjcf: an MJCF written from our model (every joint type);
 *   - mjb_write_urdf_copy: a copy of a URDF file that MuJoCo's own URDF
 *     compiler loads (what the robots are checked and timed on).
 * and one map between the two coordinate sets (mjb_map), matched by joint
 * name, with the conversions of states, accelerations, forces and mass
 * matrices. See mjbridge.c for the conventions.
 */
#ifndef MBS_MJBRIDGE_H
#define MBS_MJBRIDGE_H

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "mbsens/mbsens.h"
#include "mbs_testing.h"

/* ---------------------------------------------------------------- models */

/* Write the MJCF of m (mbs_model_to_mjcf) and load it, with
 * mjb_disable_extras applied (no passive forces, equalities, limits or
 * constraint solver: the tree's own dynamics only). The files go to
 * $MBS_BENCH_MJCF_DIR if set (and are kept), else to a temporary directory
 * that is removed. NULL on failure, with the reason in err. */
mjModel *mjb_load_mjcf(const mbs_model *m, const char *label, char *err, size_t errlen);

/* MuJoCo 2.2.2 rejects moving bodies without mass: give every massless
 * moving body of m (its private copy) the mass eps_mass, a centre of mass at
 * the body origin and the inertia eps_inertia * I. Returns how many. */
int mjb_fill_massless(mbs_model *m, double eps_mass, double eps_inertia);

/* The copy of URDF `src` that MuJoCo loads, written to `dst`: <visual> and
 * <collision> removed; <mujoco><compiler fusestatic=.. discardvisual
 * inertiafromgeom=false balanceinertia=true/></mujoco> added; every
 * <inertial> rewritten in its principal axes (MuJoCo 2.2.2's own conversion
 * of a full inertia, mju_eig3, loses ~6 digits); point masses written with
 * round-off (|I| < 1e-12 m) become zero, or, with point_masses, m (1e-4 m)^2 I
 * (MuJoCo rejects moving bodies without rotational inertia); floating: a
 * link "world" and a floating joint "root_joint" from it to the root link.
 * 0 on success. */
int mjb_write_urdf_copy(const char *src, const char *dst, int floating, int point_masses, int fusestatic);

/* Contacts, limits, equality, friction loss, passive forces, actuation and
 * the constraint solver off; armature, damping and friction loss zero. */
void mjb_disable_extras(mjModel *mm);

/* ---------------------------------------------------------------- coordinates */

typedef struct mjb_joint {
    mbs_joint_type type;
    int qoff, nq, voff, nvo;   /* ours: coordinates, velocity offset, velocities (the rows
                                * of T: nq Euler rates, or 3 / 6 tangent velocities) */
    int tangent;               /* ours: tangent velocities (spherical, floating) */
    int qposadr, dofadr, nv;   /* MuJoCo */
    double Xp[9], Xc[9], Pp[3], Pc[3];
} mjb_joint;

typedef struct mjb_map {
    const mbs_model *m;
    const mjModel *mm;
    int nj;                    /* our joints with coordinates */
    mjb_joint *j;
    int nq, nvo;               /* ours: coordinates, velocities */
    int nv;                    /* MuJoCo's velocities */
} mjb_map;

/* Match every joint of m that has coordinates with MuJoCo's joint of the
 * same name (the joint name for spherical and floating joints, else the name
 * of its first coordinate; cardan, cylindrical and planar joints are
 * consecutive MuJoCo joints). Checks the types and the sizes; 0 on success,
 * else -1 with a message on stderr naming `label`. */
int mjb_map_init(mjb_map *P, const mbs_model *m, const mjModel *mm, const char *label);
void mjb_map_free(mjb_map *P);

/* Our velocities are qd, our accelerations qdd, our generalized forces tau
 * (nvo each; Euler-parameter rates or tangent velocities per joint), with
 * qd = T v (v MuJoCo's velocities, T block diagonal: nvo x nv).
 * MuJoCo's qpos and qvel from our (q, qd); applied forces and controls
 * zeroed. */
void mjb_set_state(const mjb_map *P, mjData *d, const double *q, const double *qd);
/* MuJoCo's qacc from our (q, qd, qdd), and our qdd (with p.pdd = -|pd|^2 on
 * Euler-parameter rates) from MuJoCo's qacc. */
void mjb_qacc_from_ours(const mjb_map *P, const double *q, const double *qd, const double *qdd, double *qacc);
void mjb_qdd_from_mj(const mjb_map *P, const double *q, const double *qd, const double *qacc, double *qdd);
/* tau_mj = T^T tau, and the tau in the range of T (orthogonal to p on
 * Euler-parameter rates) with T^T tau = tau_mj. */
void mjb_force_to_mj(const mjb_map *P, const double *q, const double *tau, double *tau_mj);
void mjb_force_from_mj(const mjb_map *P, const double *q, const double *tau_mj, double *tau);
/* M_mj = T^T M T (M: ours, nvo x nvo, M_mj: nv x nv, row-major). */
void mjb_mass_to_mj(const mjb_map *P, const double *q, const double *M, double *M_mj);

/* max |a - b| / max |b| (a NaN counts as the largest error) */
double mjb_relerr(const double *a, const double *b, int n);

#endif
