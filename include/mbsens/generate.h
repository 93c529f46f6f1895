/*
 * mbsens/generate.h - generated benchmark models: spatial chains, the
 * parameter-count sweep body, a robot plus free bodies.
 *
 * mbs_generate_chain_json() writes the JSON text (docs/model-format.md) of a
 * spatial serial chain, the standard benchmark of the recursive algorithms:
 *
 *   - n links "link1".."linkN", each a solid box 0.3 x 0.04 x 0.03 m along
 *     its local x axis with a distinct mass of about 1 kg (0.8..1.2 kg), its
 *     centre of mass slightly off the link axis, and a full (non-diagonal)
 *     inertia tensor: the box inertia turned by a small constant tilt;
 *   - named points "base" [0,0,0] and "tip" [0.3,0,0] on every link;
 *     joint "jK" joins linkK-1.tip (or the ground origin) to linkK.base;
 *   - joint axes that make the chain genuinely spatial: revolute joints
 *     alternate between the local z (odd K) and y (even K) axes; cardan
 *     joints have axis z and ref y (swing in both directions transverse to
 *     the link); spherical joints use Euler parameters;
 *   - deterministic non-zero initial state q0 (small angles, normalized
 *     Euler parameters) and small qd0 (p.pdot = 0 for Euler parameters);
 *   - gravity [0, 0, -9.81];
 *   - parameters "m1" (sets link1.mass) and "L1" (sets link1.tip[0] and,
 *     scaled by 0.5, link1.com[0]).
 *
 * With floating_base != 0 the first link is attached to the ground by a
 * floating joint (7 coordinates x, y, z, e0..e3; identity rotation at
 * position [0.1, -0.2, 1.0]) and joints 2..n are of type `joint`.
 *
 * The same arguments always give the same text. Coordinates:
 *   nq = n * nq(joint)                     (floating_base == 0)
 *   nq = 7 + (n - 1) * nq(joint)           (floating_base != 0)
 * with nq(revolute) = 1, nq(cardan) = 2, nq(spherical) = 4.
 */
#ifndef MBSENS_GENERATE_H
#define MBSENS_GENERATE_H

#include "error.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MBS_GENERATE_CHAIN_MIN_LINKS 2
#define MBS_GENERATE_CHAIN_MAX_LINKS 256

/* A malloc'd, NUL-terminated JSON model text (free() it), or NULL with err
 * filled: MBS_ERR_ARG if n is outside [2, 256] or joint is not one of
 * MBS_JOINT_REVOLUTE, MBS_JOINT_CARDAN, MBS_JOINT_SPHERICAL;
 * MBS_ERR_NOMEM if memory runs out. Thread-safe. */
char *mbs_generate_chain_json(int n, mbs_joint_type joint, int floating_base,
                              mbs_error *err);

/* The parameter-count sweep model (thesis Table 7.27 style): one rigid body
 * on a floating joint, released with a small spin, pushed by a force and a
 * torque in body axes whose magnitude follows a cubic spline through
 * `nknots` equally spaced knots over [0, tf]; the knot values are the design
 * parameters "u0".."u<nknots-1>", sampling 1 + 0.5 sin(4 pi t / tf) (the
 * same maneuver for every knot count). Objectives: "track" (a body point against
 * a fixed target) and "spin" (the angular velocity). nknots in [2, 100000],
 * tf > 0. Thread-safe; free() the text. */
char *mbs_generate_spline_body_json(int nknots, double tf, mbs_error *err);

#define MBS_GENERATE_FREE_BODIES_MAX 100000

/* The large branched model of the sparse-tree benchmarks: the JSON text of
 * `robot` (mbs_model_to_json; NULL: no robot, gravity [0, 0, -9.81]) with
 * "_free_bodies_<n>" appended to its name, plus n free rigid bodies
 * "free1".."free<n>", each on a floating joint "free<k>_joint" from the
 * ground (7 coordinates, 6 DOF):
 *
 *   - body k a box of about 0.1..0.2 x 0.08..0.16 x 0.06..0.12 m of
 *     density 500 kg/m^3 (sides rounded to mm), centre of mass at its
 *     origin, principal axes along its local axes;
 *   - initial position on a grid of 0.5 m starting at [1, -2.25, 0.5] (10 x
 *     10 bodies per layer, layers 0.5 m apart), turned by up to 1 rad about
 *     an axis that changes with k; small linear and angular velocities
 *     (p.pdot = 0).
 *
 * The bodies come after the robot's, so the robot keeps its numbering:
 * nq = nq(robot) + 7 n, and M is block diagonal: the robot's block, then
 * one block per free body (mbsens/sparse.h). The same arguments
 * always give the same text. n in [1, MBS_GENERATE_FREE_BODIES_MAX], else
 * MBS_ERR_ARG; MBS_ERR_ARG also if the robot has a body "free<k>" or a
 * joint "free<k>_joint" for a k <= n. Thread-safe; free() the text. */
char *mbs_generate_free_bodies_json(const mbs_model *robot, int n, mbs_error *err);

#ifdef __cplusplus
}
#endif
#endif
