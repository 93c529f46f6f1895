/*
 * test_mujoco_crosscheck.c - the 16 example robots loaded by our URDF loader
 * and by MuJoCo 2.2.2's own URDF compiler agree: inverse dynamics, mass
 * matrix and forward dynamics at random states, relative agreement 1e-9
 * (max |a - b| / max |b|), coordinates matched by joint name. Built only
 * where MuJoCo is found (tests/CMakeLists.txt); the library never links it.
 *
 * What MuJoCo loads is a copy of each URDF written by this test (libxml2):
 *   - <visual> and <collision> removed (no geoms: nothing to collide);
 *   - <mujoco><compiler fusestatic="false" discardvisual="true"
 *     inertiafromgeom="false" balanceinertia="true"/></mujoco> added.
 *     fusestatic is off because MuJoCo 2.2.2 re-diagonalizes a fused
 *     inertia with mju_eig3, which stops early (~1e-6 relative error, see
 *     bench/bench_mujoco_fd.c); links fixed to each other stay separate
 *     welded bodies, which is the same dynamics as our merged bodies;
 *   - every <inertial> rewritten in its principal axes (same physics: the
 *     origin rpy becomes that of R(rpy) V, the inertia diag(lambda), with V
 *     and lambda from Jacobi rotations to round-off), for the same reason:
 *     MuJoCo's conversion of a full inertia loses ~6 digits; of a diagonal
 *     one, none;
 *   - inertias that our loader takes as point masses (radius of gyration
 *     below 1 um: icub_reduced writes point masses with round-off, e.g.
 *     head ixz = 2.4e-35) are written as zero.
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
 * armature, damping and friction loss set to zero.
 *
 * States: hinge and slide coordinates are ours; the free joint (our
 * floating joint with identity frames at the body origin): qpos = [position,
 * quaternion w x y z] = ours, qvel = [world velocity of the origin, angular
 * velocity in the body frame w = 2 G(p) pd], qacc likewise
 * (bench/bench_mujoco_fd.c). Forces: tau_mj = T^T tau with qd = T v; for a
 * given tau_mj our tau on the Euler parameters is 2 G(p)^T tau_w (orthogonal
 * to p, as our forward dynamics expects).
 *
 * $MBS_URDF_DIR (default ../shared/data/example-robot-data relative to the
 * source directory); exit 77 (skipped) if absent.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>

#include "testutil.h"
#include "model_impl.h"

#define TOL 1e-9
#define NSTATES 5

static const char *const ROBOTS[] = {
    "a1.urdf", "anymal.urdf", "baxter.urdf", "double_pendulum.urdf", "go2.urdf", "hyq_no_sensors.urdf",
    "icub_reduced.urdf", "kinova.urdf", "panda.urdf", "pr2.urdf", "romeo_small.urdf", "simple_humanoid.urdf",
    "solo12.urdf", "talos_full_v2.urdf", "talos_reduced.urdf", "ur5_robot.urdf",
};
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))

/* ---------------------------------------------------------------- 3x3 helpers */

static void mmul(double C[9], const double A[9], const double B[9])
{
    double T[9];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) T[3 * r + k] = A[3 * r] * B[k] + A[3 * r + 1] * B[3 + k] + A[3 * r + 2] * B[6 + k];
    memcpy(C, T, sizeof T);
}

static void rpy_matrix(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
           sy = sin(rpy[2]);
    double A[9] = { cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                    sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                    -sp,     cp * sr,                cp * cr };
    memcpy(R, A, sizeof A);
}

/* S = V diag(lam) V^T by cyclic Jacobi rotations to round-off */
static void sym_eig3(const double S[9], double lam[3], double V[9])
{
    double a[9];
    memcpy(a, S, sizeof a);
    for (int k = 0; k < 9; k++) V[k] = (k % 4 == 0);
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a[1]) + fabs(a[2]) + fabs(a[5]);
        if (off == 0) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                double apq = a[3 * p + q];
                if (apq == 0) continue;
                double theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; k++) {
                    double akp = a[3 * k + p], akq = a[3 * k + q];
                    a[3 * k + p] = c * akp - s * akq;
                    a[3 * k + q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[3 * p + k], aqk = a[3 * q + k];
                    a[3 * p + k] = c * apk - s * aqk;
                    a[3 * q + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = V[3 * k + p], vkq = V[3 * k + q];
                    V[3 * k + p] = c * vkp - s * vkq;
                    V[3 * k + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int k = 0; k < 3; k++) lam[k] = a[4 * k];
}

/* ---------------------------------------------------------------- the MuJoCo copy of a URDF */

static double attr_num(xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    double d = v ? strtod((const char *)v, NULL) : 0;
    xmlFree(v);
    return d;
}

static void attr_vec(xmlNode *n, const char *name, double out[3])
{
    out[0] = out[1] = out[2] = 0;
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) return;
    char *p = (char *)v, *end;
    for (int k = 0; k < 3; k++) {
        out[k] = strtod(p, &end);
        p = end;
    }
    xmlFree(v);
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *k = n->children; k; k = k->next)
        if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, name) == 0) return k;
    return NULL;
}

static void set_attr(xmlNode *n, const char *name, const char *fmt, const double *v, int count)
{
    char buf[256] = "";
    size_t len = 0;
    for (int k = 0; k < count; k++) len += (size_t)snprintf(buf + len, sizeof buf - len, fmt, k ? " " : "", v[k]);
    xmlSetProp(n, (const xmlChar *)name, (const xmlChar *)buf);
}

/* <inertial> in principal axes (see the file comment); point_masses: a
 * zero inertia with a positive mass becomes m (1e-4 m)^2 I */
static void rewrite_inertial(xmlNode *in, int point_masses)
{
    xmlNode *o = child(in, "origin"), *mn = child(in, "mass"), *inn = child(in, "inertia");
    if (!mn || !inn) return;
    double rpy[3] = { 0, 0, 0 }, xyz[3] = { 0, 0, 0 }, R[9];
    if (o) {
        attr_vec(o, "rpy", rpy);
        attr_vec(o, "xyz", xyz);
    } else {
        o = xmlNewChild(in, NULL, (const xmlChar *)"origin", NULL);
    }
    double mass = attr_num(mn, "value");
    double I[6] = { attr_num(inn, "ixx"), attr_num(inn, "iyy"), attr_num(inn, "izz"),
                    attr_num(inn, "ixy"), attr_num(inn, "ixz"), attr_num(inn, "iyz") };
    double big = 0;
    for (int k = 0; k < 6; k++)
        if (fabs(I[k]) > big) big = fabs(I[k]);
    double lam[3] = { 0, 0, 0 }, V[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    if (!(big < 1e-12 * mass)) {   /* else a point mass written with round-off: zero */
        double S[9] = { I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2] };
        sym_eig3(S, lam, V);
    } else if (point_masses && mass > 0) {
        lam[0] = lam[1] = lam[2] = 1e-8 * mass;
    }
    /* first principal axis: the one with the smallest z component in the
     * link frame (keeps the pitch of the rpy away from +-pi/2) */
    rpy_matrix(rpy, R);
    double W[9];
    mmul(W, R, V);
    int first = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(W[6 + k]) < fabs(W[6 + first])) first = k;
    int perm[3] = { first, (first + 1) % 3, (first + 2) % 3 };
    double P[9], lp[3];
    for (int c = 0; c < 3; c++) {
        lp[c] = lam[perm[c]];
        for (int r = 0; r < 3; r++) P[3 * r + c] = W[3 * r + perm[c]];
    }
    double det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[1] * (P[3] * P[8] - P[5] * P[6]) +
                 P[2] * (P[3] * P[7] - P[4] * P[6]);
    if (det < 0)
        for (int r = 0; r < 3; r++) P[3 * r + 2] = -P[3 * r + 2];
    /* P = Rz(y) Ry(p) Rx(r) */
    double nrpy[3] = { atan2(P[7], P[8]), asin(-P[6]), atan2(P[3], P[0]) };
    set_attr(o, "rpy", "%s%.17g", nrpy, 3);
    set_attr(o, "xyz", "%s%.17g", xyz, 3);
    double d6[6] = { lp[0], lp[1], lp[2], 0, 0, 0 };
    static const char *const comp[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
    for (int k = 0; k < 6; k++) set_attr(inn, comp[k], "%s%.17g", &d6[k], 1);
}

/* Write the MuJoCo copy of `src` to `dst`. 0 on success. */
static int write_mujoco_urdf(const char *src, const char *dst, int floating, int point_masses)
{
    xmlDocPtr doc = xmlReadFile(src, NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
    if (!doc) return -1;
    xmlNode *robot = xmlDocGetRootElement(doc);
    char *root = NULL;
    for (xmlNode *n = robot->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "link") != 0) continue;
        for (xmlNode *k = n->children, *next; k; k = next) {
            next = k->next;
            if (k->type == XML_ELEMENT_NODE &&
                (strcmp((const char *)k->name, "visual") == 0 || strcmp((const char *)k->name, "collision") == 0)) {
                xmlUnlinkNode(k);
                xmlFreeNode(k);
            }
        }
        xmlNode *in = child(n, "inertial");
        if (in) rewrite_inertial(in, point_masses);
        /* root link: not the child of any joint */
        xmlChar *name = xmlGetProp(n, (const xmlChar *)"name");
        int is_child = 0;
        for (xmlNode *j = robot->children; j && name; j = j->next) {
            if (j->type != XML_ELEMENT_NODE || strcmp((const char *)j->name, "joint") != 0) continue;
            xmlNode *c = child(j, "child");
            xmlChar *cl = c ? xmlGetProp(c, (const xmlChar *)"link") : NULL;
            if (cl && xmlStrcmp(cl, name) == 0) is_child = 1;
            xmlFree(cl);
        }
        if (!is_child && name && !root) root = (char *)xmlStrdup(name);
        xmlFree(name);
    }
    xmlNode *mj = xmlNewNode(NULL, (const xmlChar *)"mujoco");
    xmlNode *comp = xmlNewChild(mj, NULL, (const xmlChar *)"compiler", NULL);
    xmlSetProp(comp, (const xmlChar *)"fusestatic", (const xmlChar *)"false");
    xmlSetProp(comp, (const xmlChar *)"discardvisual", (const xmlChar *)"true");
    xmlSetProp(comp, (const xmlChar *)"inertiafromgeom", (const xmlChar *)"false");
    xmlSetProp(comp, (const xmlChar *)"balanceinertia", (const xmlChar *)"true");
    xmlAddPrevSibling(robot->children, mj);
    if (floating && root) {
        char rootname[512];
        snprintf(rootname, sizeof rootname, "%s", root);
        xmlNode *w = xmlNewChild(robot, NULL, (const xmlChar *)"link", NULL);
        xmlSetProp(w, (const xmlChar *)"name", (const xmlChar *)"world");
        xmlNode *j = xmlNewChild(robot, NULL, (const xmlChar *)"joint", NULL);
        xmlSetProp(j, (const xmlChar *)"name", (const xmlChar *)"root_joint");
        xmlSetProp(j, (const xmlChar *)"type", (const xmlChar *)"floating");
        xmlSetProp(xmlNewChild(j, NULL, (const xmlChar *)"parent", NULL), (const xmlChar *)"link",
                   (const xmlChar *)"world");
        xmlSetProp(xmlNewChild(j, NULL, (const xmlChar *)"child", NULL), (const xmlChar *)"link",
                   (const xmlChar *)rootname);
    }
    int rc = xmlSaveFile(dst, doc) < 0 ? -1 : 0;
    xmlFree(root);
    xmlFreeDoc(doc);
    return rc;
}

/* ---------------------------------------------------------------- state mapping */

/* G(p) = [-e, -S(e) + e0 I], 3 x 4 row-major */
static void ep_G(double G[12], const double p[4])
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    double g[12] = { -e1, e0, e3, -e2, -e2, -e3, e0, e1, -e3, e2, -e1, e0 };
    memcpy(G, g, sizeof g);
}
/* w = 2 G(p) x */
static void G2(double w[3], const double p[4], const double x[4])
{
    double G[12];
    ep_G(G, p);
    for (int r = 0; r < 3; r++) w[r] = 2 * (G[4 * r] * x[0] + G[4 * r + 1] * x[1] + G[4 * r + 2] * x[2] + G[4 * r + 3] * x[3]);
}
/* x = c G(p)^T w */
static void Gt(double x[4], const double p[4], const double w[3], double c)
{
    double G[12];
    ep_G(G, p);
    for (int k = 0; k < 4; k++) x[k] = c * (G[k] * w[0] + G[4 + k] * w[1] + G[8 + k] * w[2]);
}

typedef struct {
    int ours;      /* our joint (body) index */
    int qoff, nq;  /* ours */
    int floating;
    int qposadr, dofadr;
} jpair;

typedef struct {
    mbs_model *m;
    mjModel *mm;
    int nj;
    jpair *j;
    int nq, nv;
} pair;

static int pair_init(pair *P, const char *label)
{
    const mbs_model *m = P->m;
    P->nq = m->nq;
    P->nv = P->mm->nv;
    P->j = calloc((size_t)m->nb + 1, sizeof *P->j);
    P->nj = 0;
    int nv = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        jpair *j = &P->j[P->nj++];
        j->ours = i;
        j->qoff = jt->qoff;
        j->nq = jt->nq;
        j->floating = jt->type == MBS_JOINT_FLOATING;
        if (jt->type != MBS_JOINT_REVOLUTE && jt->type != MBS_JOINT_PRISMATIC && !j->floating) {
            fprintf(stderr, "%s: joint %s: type not handled by this test\n", label, jt->name);
            return -1;
        }
        if (j->floating) {
            /* identity frames at the body origin (mbs_model_load_urdf's root_joint) */
            const double *x = m->x;
            for (int k = 0; k < 9; k++)
                if (x[jt->x_Xp + k] != (k % 4 == 0) || x[jt->x_Xc + k] != (k % 4 == 0)) return -1;
            for (int k = 0; k < 3; k++)
                if (x[jt->x_ppoint + k] != 0 || x[jt->x_cpoint + k] != 0) return -1;
        }
        int id = mj_name2id(P->mm, mjOBJ_JOINT, jt->name);
        if (id < 0) {
            fprintf(stderr, "%s: MuJoCo has no joint named %s\n", label, jt->name);
            return -1;
        }
        int want = j->floating ? mjJNT_FREE : jt->type == MBS_JOINT_REVOLUTE ? mjJNT_HINGE : mjJNT_SLIDE;
        if (P->mm->jnt_type[id] != want) {
            fprintf(stderr, "%s: joint %s: MuJoCo type %d\n", label, jt->name, P->mm->jnt_type[id]);
            return -1;
        }
        j->qposadr = P->mm->jnt_qposadr[id];
        j->dofadr = P->mm->jnt_dofadr[id];
        nv += j->floating ? 6 : 1;
    }
    if (nv != P->nv || P->mm->njnt != P->nj) {
        fprintf(stderr, "%s: MuJoCo nv %d, njnt %d; ours %d, %d\n", label, P->nv, P->mm->njnt, nv, P->nj);
        return -1;
    }
    return 0;
}

/* MuJoCo state from ours */
static void to_mj(const pair *P, const double *q, const double *qd, double *qpos, double *qvel)
{
    for (int k = 0; k < P->nj; k++) {
        const jpair *j = &P->j[k];
        if (j->floating) {
            memcpy(qpos + j->qposadr, q + j->qoff, 7 * sizeof *q);
            memcpy(qvel + j->dofadr, qd + j->qoff, 3 * sizeof *q);
            G2(qvel + j->dofadr + 3, q + j->qoff + 3, qd + j->qoff + 3);
        } else {
            qpos[j->qposadr] = q[j->qoff];
            qvel[j->dofadr] = qd[j->qoff];
        }
    }
}

/* our qdd from MuJoCo's qacc (p.pdd = -|pd|^2), and MuJoCo's qacc from ours */
static void qdd_from_mj(const pair *P, const double *q, const double *qd, const double *qacc, double *qdd)
{
    for (int k = 0; k < P->nj; k++) {
        const jpair *j = &P->j[k];
        if (j->floating) {
            const double *p = q + j->qoff + 3, *pd = qd + j->qoff + 3;
            double pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
            memcpy(qdd + j->qoff, qacc + j->dofadr, 3 * sizeof *qdd);
            Gt(qdd + j->qoff + 3, p, qacc + j->dofadr + 3, 0.5);
            for (int c = 0; c < 4; c++) qdd[j->qoff + 3 + c] -= p[c] * pp;
        } else {
            qdd[j->qoff] = qacc[j->dofadr];
        }
    }
}

static void qacc_from_ours(const pair *P, const double *q, const double *qdd, double *qacc)
{
    for (int k = 0; k < P->nj; k++) {
        const jpair *j = &P->j[k];
        if (j->floating) {
            memcpy(qacc + j->dofadr, qdd + j->qoff, 3 * sizeof *qdd);
            G2(qacc + j->dofadr + 3, q + j->qoff + 3, qdd + j->qoff + 3);   /* G(pd) pd = 0 */
        } else {
            qacc[j->dofadr] = qdd[j->qoff];
        }
    }
}

/* T (nq x nv, row-major) with qd = T v */
static void t_matrix(const pair *P, const double *q, double *T)
{
    memset(T, 0, sizeof(double) * (size_t)P->nq * (size_t)P->nv);
    for (int k = 0; k < P->nj; k++) {
        const jpair *j = &P->j[k];
        if (j->floating) {
            for (int c = 0; c < 3; c++) T[(size_t)(j->qoff + c) * P->nv + j->dofadr + c] = 1;
            for (int c = 0; c < 3; c++) {
                double e[3] = { 0, 0, 0 }, col[4];
                e[c] = 1;
                Gt(col, q + j->qoff + 3, e, 0.5);
                for (int r = 0; r < 4; r++) T[(size_t)(j->qoff + 3 + r) * P->nv + j->dofadr + 3 + c] = col[r];
            }
        } else {
            T[(size_t)j->qoff * P->nv + j->dofadr] = 1;
        }
    }
}

/* our tau for a MuJoCo generalized force (T^T tau = tau_mj, orthogonal to p) */
static void tau_from_mj(const pair *P, const double *q, const double *tmj, double *tau)
{
    for (int k = 0; k < P->nj; k++) {
        const jpair *j = &P->j[k];
        if (j->floating) {
            memcpy(tau + j->qoff, tmj + j->dofadr, 3 * sizeof *tau);
            Gt(tau + j->qoff + 3, q + j->qoff + 3, tmj + j->dofadr + 3, 2.0);
        } else {
            tau[j->qoff] = tmj[j->dofadr];
        }
    }
}

static double relerr(const double *a, const double *b, int n)
{
    double e = 0, s = 0;
    for (int k = 0; k < n; k++) {
        double t = fabs(a[k] - b[k]);
        if (t > e || isnan(t)) e = t;
        if (fabs(b[k]) > s) s = fabs(b[k]);
    }
    return s > 0 ? e / s : e;
}

static double urand(unsigned long *s, double lo, double hi)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* ---------------------------------------------------------------- one robot, one base */

typedef struct { double id, mm, fd; } worst;

static int compare(pair *P, unsigned long seed, worst *W)
{
    mbs_model *m = P->m;
    mjModel *mm = P->mm;
    const int nq = P->nq, nv = P->nv;
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    mjData *md = mj_makeData(mm);
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    double *qdd = calloc((size_t)nq, sizeof *qdd), *tau = calloc((size_t)nq, sizeof *tau);
    double *qacc = calloc((size_t)nv, sizeof *qacc), *tmj = calloc((size_t)nv, sizeof *tmj);
    double *tconv = calloc((size_t)nv, sizeof *tconv), *aconv = calloc((size_t)nv, sizeof *aconv);
    double *M = calloc((size_t)nq * nq, sizeof *M), *T = calloc((size_t)nq * nv, sizeof *T);
    double *MT = calloc((size_t)nq * nv, sizeof *MT), *Mc = calloc((size_t)nv * nv, sizeof *Mc);
    double *Mm = calloc((size_t)nv * nv, sizeof *Mm);
    int rc = 0;
    W->id = W->mm = W->fd = 0;
    for (int s = 0; s < NSTATES && rc == 0; s++) {
        /* random state */
        for (int k = 0; k < P->nj; k++) {
            const jpair *j = &P->j[k];
            if (j->floating) {
                double p[4], n = 0, v[6];
                for (int c = 0; c < 3; c++) q[j->qoff + c] = urand(&seed, -1, 1);
                for (int c = 0; c < 4; c++) {
                    p[c] = urand(&seed, -1, 1);
                    n += p[c] * p[c];
                }
                for (int c = 0; c < 4; c++) q[j->qoff + 3 + c] = p[c] / sqrt(n);
                for (int c = 0; c < 6; c++) v[c] = urand(&seed, -1, 1);
                memcpy(qd + j->qoff, v, 3 * sizeof *v);
                Gt(qd + j->qoff + 3, q + j->qoff + 3, v + 3, 0.5);
            } else {
                q[j->qoff] = urand(&seed, -3, 3);
                qd[j->qoff] = urand(&seed, -2, 2);
            }
        }
        for (int k = 0; k < nv; k++) {
            qacc[k] = urand(&seed, -3, 3);
            tmj[k] = urand(&seed, -10, 10);
        }
        to_mj(P, q, qd, md->qpos, md->qvel);
        mju_zero(md->qfrc_applied, nv);
        mju_zero(md->xfrc_applied, 6 * mm->nbody);

        /* ID: mj_inverse at qacc vs ours at the same acceleration */
        mju_copy(md->qacc, qacc, nv);
        mj_inverse(mm, md);
        qdd_from_mj(P, q, qd, qacc, qdd);
        if (mbs_inverse_dynamics(m, d, q, qd, qdd, tau) != MBS_OK) {
            fprintf(stderr, "inverse dynamics: %s\n", mbs_data_error(d));
            rc = -1;
            break;
        }
        t_matrix(P, q, T);
        for (int c = 0; c < nv; c++) {
            double t = 0;
            for (int r = 0; r < nq; r++) t += T[(size_t)r * nv + c] * tau[r];
            tconv[c] = t;
        }
        double e = relerr(tconv, md->qfrc_inverse, nv);
        if (e > W->id) W->id = e;

        /* mass matrix: T^T M T vs mj_fullM */
        mbs_mass_matrix(m, d, q, M);
        mj_fullM(mm, Mm, md->qM);
        for (int r = 0; r < nq; r++)
            for (int c = 0; c < nv; c++) {
                double t = 0;
                for (int k = 0; k < nq; k++) t += M[(size_t)r * nq + k] * T[(size_t)k * nv + c];
                MT[(size_t)r * nv + c] = t;
            }
        for (int r = 0; r < nv; r++)
            for (int c = 0; c < nv; c++) {
                double t = 0;
                for (int k = 0; k < nq; k++) t += T[(size_t)k * nv + r] * MT[(size_t)k * nv + c];
                Mc[(size_t)r * nv + c] = t;
            }
        e = relerr(Mc, Mm, nv * nv);
        if (e > W->mm) W->mm = e;

        /* FD: mj_forward with qfrc_applied = tau_mj vs ours */
        mju_copy(md->qfrc_applied, tmj, nv);
        mj_forward(mm, md);
        tau_from_mj(P, q, tmj, tau);
        if (mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, qdd) != MBS_OK) {
            fprintf(stderr, "forward dynamics: %s\n", mbs_data_error(d));
            rc = -1;
            break;
        }
        qacc_from_ours(P, q, qdd, aconv);
        e = relerr(aconv, md->qacc, nv);
        if (e > W->fd) W->fd = e;
    }
    free(q); free(qd); free(qdd); free(tau); free(qacc); free(tmj); free(tconv); free(aconv);
    free(M); free(T); free(MT); free(Mc); free(Mm);
    mj_deleteData(md);
    mbs_data_free(d);
    return rc;
}

int main(void)
{
    char dir[4096];
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else
        snprintf(dir, sizeof dir, "%s", mbs_test_path("../shared/data/example-robot-data"));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("test_mujoco_crosscheck: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 77;
    }
    char tmpdir[] = "/tmp/mbs_mjcheck_XXXXXX";
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    printf("%-22s %-8s %4s %4s  %-9s %-9s %-9s\n", "robot", "base", "nq", "nv", "ID", "M", "FD");
    for (int r = 0; r < NROBOTS; r++) {
        char src[8192], dst[8192];
        snprintf(src, sizeof src, "%s/%s", dir, ROBOTS[r]);
        snprintf(dst, sizeof dst, "%s/%s", tmpdir, ROBOTS[r]);
        for (int floating = 0; floating <= 1; floating++) {
            if (floating && strcmp(ROBOTS[r], "ur5_robot.urdf") == 0) continue;   /* root link is "world" */
            const int icub = strcmp(ROBOTS[r], "icub_reduced.urdf") == 0;
            CHECK(write_mujoco_urdf(src, dst, floating, icub) == 0, "%s: cannot write the MuJoCo copy", ROBOTS[r]);
            char mjerr[1024] = "";
            mjModel *mm = mj_loadXML(dst, NULL, mjerr, sizeof mjerr);
            CHECK(mm != NULL, "%s: MuJoCo: %s", ROBOTS[r], mjerr);
            if (!mm) continue;
            mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT |
                                    mjDSBL_CONTACT | mjDSBL_PASSIVE | mjDSBL_ACTUATION;
            for (int k = 0; k < mm->nv; k++) mm->dof_armature[k] = mm->dof_damping[k] = mm->dof_frictionloss[k] = 0;
            mbs_urdf_options o = { floating, 0, NULL, NULL, 1 };
            mbs_error err = { 0, "" };
            pair P;
            memset(&P, 0, sizeof P);
            P.mm = mm;
            /* icub: both sides load the copy (its point masses have an inertia, see above) */
            o.floating_base = floating && !icub;
            P.m = mbs_model_load_urdf(icub ? dst : src, &o, &err);
            if (!getenv("MBS_KEEP_MJ_URDF")) unlink(dst);
            CHECK(P.m != NULL, "%s: %s", ROBOTS[r], err.msg);
            if (P.m && pair_init(&P, ROBOTS[r]) == 0) {
                worst W;
                int rc = compare(&P, 1234 + (unsigned long)r, &W);
                CHECK(rc == 0, "%s: comparison failed", ROBOTS[r]);
                CHECK(W.id <= TOL, "%s (%s): inverse dynamics differ by %.3g", ROBOTS[r],
                      floating ? "floating" : "fixed", W.id);
                CHECK(W.mm <= TOL, "%s (%s): mass matrices differ by %.3g", ROBOTS[r],
                      floating ? "floating" : "fixed", W.mm);
                CHECK(W.fd <= TOL, "%s (%s): forward dynamics differ by %.3g", ROBOTS[r],
                      floating ? "floating" : "fixed", W.fd);
                printf("%-22s %-8s %4d %4d  %-9.2e %-9.2e %-9.2e\n", ROBOTS[r], floating ? "floating" : "fixed",
                       P.nq, P.nv, W.id, W.mm, W.fd);
            } else if (P.m) {
                CHECK(0, "%s: joints do not match", ROBOTS[r]);
            }
            free(P.j);
            mbs_model_free(P.m);
            mj_deleteModel(mm);
        }
    }
    rmdir(tmpdir);
    return mbs_test_summary("test_mujoco_crosscheck");
}
