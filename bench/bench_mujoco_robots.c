/*
 * bench_mujoco_robots.c - the 16 example robots (URDF, ../shared/data/
 * example-robot-data or $MBS_URDF_DIR): ns/call of our inverse dynamics,
 * mass matrix, fully recursive forward dynamics, inverse-dynamics
 * derivatives (dtau/dq, dtau/dqd) and forward-dynamics derivatives
 * (dqdd/dq, dqdd/dqd, dqdd/dtau; fully recursive), against MuJoCo 2.2.2 on
 * the same URDF: mj_rne (with the position and velocity stages it needs),
 * mj_crb + mj_factorM (with the position stages), mj_forward, and
 * mjd_transitionFD (centered, eps 1e-6: MuJoCo's own derivatives, finite
 * differences of mj_step). Ratios are ours / MuJoCo (lower is better),
 * medians of per-repetition ratios of interleaved timings (bench_common.h).
 * Targets: FD <= 0.5 x mj_forward; FD derivatives >= 30 x faster than
 * mjd_transitionFD.
 *
 * MuJoCo loads the URDF as tests/test_mujoco_crosscheck.c prepares it
 * (visual and collision removed, balanceinertia; icub_reduced's point
 * masses get m (1e-4 m)^2 of inertia) but with fusestatic="true", its
 * default and the fair setting: our loader merges fixed joints too.
 * Contacts, limits, passive forces and the constraint solver are disabled.
 * Fixed base, and floating base (a free joint "root_joint") for the robots
 * that walk (MBS_BENCH_FLOATING=0 to skip).
 *
 * Usage: bench_mujoco_robots [--quick] [--min-time S] [--reps N] [ROBOT.urdf]
 * Environment: MBS_URDF_DIR (the robots), MBS_BENCH_FLOATING=0 (fixed base
 * only; "only": floating base only), MBS_BENCH_PROFILE=KERNEL[:N] (run only that kernel N times, for
 * valgrind --tool=callgrind; KERNEL: ID M FD dID dFD mj_rne crb mj_forward mjd)
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

#include "bench_common.h"
#include "model_impl.h"

static const char *const ROBOTS[] = {
    "double_pendulum.urdf", "ur5_robot.urdf", "kinova.urdf", "panda.urdf", "a1.urdf", "anymal.urdf",
    "go2.urdf", "hyq_no_sensors.urdf", "solo12.urdf", "baxter.urdf", "simple_humanoid.urdf",
    "icub_reduced.urdf", "pr2.urdf", "romeo_small.urdf", "talos_reduced.urdf", "talos_full_v2.urdf",
};
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))
/* robots also timed on a floating base */
static int walks(const char *f)
{
    static const char *const w[] = { "a1.urdf", "anymal.urdf", "go2.urdf", "hyq_no_sensors.urdf", "solo12.urdf",
                                     "simple_humanoid.urdf", "icub_reduced.urdf", "romeo_small.urdf",
                                     "talos_reduced.urdf", "talos_full_v2.urdf", NULL };
    for (int k = 0; w[k]; k++)
        if (strcmp(f, w[k]) == 0) return 1;
    return 0;
}

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
    xmlSetProp(comp, (const xmlChar *)"fusestatic", (const xmlChar *)"true");
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


/* ---------------------------------------------------------------- kernels */

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    const mjModel *mm;
    mjData *md;
    const double *q, *qd, *qdd, *tau;
    double *out, *A, *B, *C;
} tctx;

static void t_id(void *p) { tctx *c = p; mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out); bench_sink = c->out[0]; }
static void t_mm(void *p) { tctx *c = p; mbs_mass_matrix(c->m, c->d, c->q, c->A); bench_sink = c->A[0]; }
static void t_fd(void *p) { tctx *c = p; mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out); bench_sink = c->out[0]; }
static void t_did(void *p)
{
    tctx *c = p;
    mbs_inverse_dynamics_derivatives(c->m, c->d, c->q, c->qd, c->qdd, c->out, c->A, c->B);
    bench_sink = c->A[0];
}
static void t_dfd(void *p)
{
    tctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out, c->A, c->B, c->C);
    bench_sink = c->A[0];
}
static void t_mj_rne(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_comVel(c->mm, c->md);
    mj_rne(c->mm, c->md, 1, c->out);
    bench_sink = c->out[0];
}
static void t_mj_crb(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_crb(c->mm, c->md); mj_factorM(c->mm, c->md);
    bench_sink = c->md->qLD[0];
}
static void t_mj_forward(void *p) { tctx *c = p; mj_forward(c->mm, c->md); bench_sink = c->md->qacc[0]; }
static void t_mj_dtrans(void *p)
{
    tctx *c = p;
    mjd_transitionFD(c->mm, c->md, 1e-6, 1, c->A, c->B, NULL, NULL);
    bench_sink = c->A[0];
}

typedef struct {
    bench_result r[9];
    double ratio[4];    /* ID, M, FD, FD derivatives: ours / MuJoCo */
} row;

static void print_row(const char *label, const char *base, int nv, const row *R)
{
    printf("| %-20s | %-8s | %3d | %8.0f | %8.0f | %8.0f | %9.0f | %9.0f | %8.0f | %8.0f | %8.0f | %10.0f "
           "| %5.2f | %5.2f | %5.2f | %6.1f |\n",
           label, base, nv, R->r[0].median_ns, R->r[1].median_ns, R->r[2].median_ns, R->r[3].median_ns,
           R->r[4].median_ns, R->r[5].median_ns, R->r[6].median_ns, R->r[7].median_ns, R->r[8].median_ns,
           R->ratio[0], R->ratio[1], R->ratio[2], 1 / R->ratio[3]);
    fflush(stdout);
}

static int run(const char *dir, const char *file, int floating, const char *tmpdir, row *R, int *nv_out)
{
    char src[8192], dst[8192], mjerr[1024] = "";
    snprintf(src, sizeof src, "%s/%s", dir, file);
    snprintf(dst, sizeof dst, "%s/%s", tmpdir, file);
    const int icub = strcmp(file, "icub_reduced.urdf") == 0;
    if (write_mujoco_urdf(src, dst, floating, icub) != 0) return -1;
    mjModel *mm = mj_loadXML(dst, NULL, mjerr, sizeof mjerr);
    mbs_urdf_options o = { floating && !icub, 0, NULL, NULL, 1 };
    mbs_error err;
    mbs_model *m = mbs_model_load_urdf(icub ? dst : src, &o, &err);
    unlink(dst);
    if (!mm || !m) {
        fprintf(stderr, "%s: %s\n", file, mm ? err.msg : mjerr);
        mj_deleteModel(mm);
        mbs_model_free(m);
        return -1;
    }
    mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT |
                            mjDSBL_CONTACT | mjDSBL_PASSIVE | mjDSBL_ACTUATION;
    for (int k = 0; k < mm->nv; k++) mm->dof_armature[k] = mm->dof_damping[k] = mm->dof_frictionloss[k] = 0;
    const int nq = m->nq, nv = mm->nv;
    *nv_out = nv;
    /* joint map by name */
    pair P;
    memset(&P, 0, sizeof P);
    P.m = m;
    P.mm = mm;
    P.nq = nq;
    P.nv = nv;
    P.j = calloc((size_t)m->nb + 1, sizeof *P.j);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (!jt->nq) continue;
        jpair *j = &P.j[P.nj++];
        j->ours = i;
        j->qoff = jt->qoff;
        j->nq = jt->nq;
        j->floating = jt->type == MBS_JOINT_FLOATING;
        int id = mj_name2id(mm, mjOBJ_JOINT, jt->name);
        if (id < 0) {
            fprintf(stderr, "%s: MuJoCo has no joint %s\n", file, jt->name);
            return -1;
        }
        j->qposadr = mm->jnt_qposadr[id];
        j->dofadr = mm->jnt_dofadr[id];
    }
    size_t big = (size_t)(nq > nv ? nq : nv);
    double *q = malloc(big * sizeof *q), *qd = malloc(big * sizeof *qd), *qdd = malloc(big * sizeof *qdd);
    double *tau = calloc(big, sizeof *tau), *qacc = malloc(big * sizeof *qacc);
    bench_rng rng;
    bench_rng_seed(&rng, 7);
    bench_random_state(m, &rng, 1.0, 1.0, q, qd, qdd);
    for (int k = 0; k < nq; k++) tau[k] = 0;
    tctx c[2];
    for (int k = 0; k < 2; k++) {
        memset(&c[k], 0, sizeof c[k]);
        c[k].m = m;
        c[k].d = bench_data(m);
        c[k].mm = mm;
        c[k].md = mj_makeData(mm);
        c[k].q = q; c[k].qd = qd; c[k].qdd = qdd; c[k].tau = tau;
        c[k].out = malloc(big * sizeof(double));
        size_t n2 = 2 * big;
        c[k].A = malloc(n2 * n2 * sizeof(double));
        c[k].B = malloc(n2 * n2 * sizeof(double));
        c[k].C = malloc(n2 * n2 * sizeof(double));
        to_mj(&P, q, qd, c[k].md->qpos, c[k].md->qvel);
        mj_forward(mm, c[k].md);
    }
    qacc_from_ours(&P, q, qdd, qacc);
    mju_copy(c[1].md->qacc, qacc, nv);
    /* MBS_BENCH_PROFILE=NAME[:N]: only run kernel NAME (ID M FD dID dFD
     * mj_rne crb mj_forward mjd) N times (default 1000), for callgrind */
    const char *prof = getenv("MBS_BENCH_PROFILE");
    if (prof && *prof) {
        static const char *const names[] = { "ID", "M", "FD", "dID", "dFD", "mj_rne", "crb", "mj_forward", "mjd" };
        const bench_fn fns[] = { t_id, t_mm, t_fd, t_did, t_dfd, t_mj_rne, t_mj_crb, t_mj_forward, t_mj_dtrans };
        char name[32];
        long n = 1000;
        snprintf(name, sizeof name, "%s", prof);
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            n = atol(colon + 1);
        }
        for (int k = 0; k < 9; k++)
            if (strcmp(name, names[k]) == 0)
                for (long i = 0; i < n; i++) fns[k](&c[k < 5 ? 0 : 1]);
        memset(R, 0, sizeof *R);
        for (int k = 0; k < 4; k++) R->ratio[k] = 1;
        goto cleanup;
    }
    void *cp[2] = { &c[0], &c[1] };
    double ratio[2];
    bench_result res[2];
    const bench_fn pairs[4][2] = { { t_id, t_mj_rne }, { t_mm, t_mj_crb }, { t_fd, t_mj_forward }, { t_dfd, t_mj_dtrans } };
    const int slot[4][2] = { { 0, 5 }, { 1, 6 }, { 2, 7 }, { 4, 8 } };
    for (int k = 0; k < 4; k++) {
        bench_time_many(2, pairs[k], cp, res, ratio);
        R->r[slot[k][0]] = res[0];
        R->r[slot[k][1]] = res[1];
        R->ratio[k] = 1 / ratio[1];
        if (k == 0) mju_copy(c[1].md->qacc, qacc, nv);
    }
    R->r[3] = bench_time(t_did, &c[0]);
cleanup:
    for (int k = 0; k < 2; k++) {
        mbs_data_free(c[k].d);
        mj_deleteData(c[k].md);
        free(c[k].out); free(c[k].A); free(c[k].B); free(c[k].C);
    }
    free(q); free(qd); free(qdd); free(tau); free(qacc); free(P.j);
    mbs_model_free(m);
    mj_deleteModel(mm);
    return 0;
}

int main(int argc, char **argv)
{
    const char *one = bench_parse_args(argc, argv, "[ROBOT.urdf]");
    char dir[4096];
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/../shared/data/example-robot-data",
                  getenv("MBS_SOURCE_DIR") ? getenv("MBS_SOURCE_DIR") : MBS_BENCH_SOURCE_DIR);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("bench_mujoco_robots: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 0;
    }
    char tmpdir[] = "/tmp/mbs_bench_robots_XXXXXX";
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    const char *fl = getenv("MBS_BENCH_FLOATING");
    const int do_floating = !(fl && strcmp(fl, "0") == 0), do_fixed = !(fl && strcmp(fl, "only") == 0);
    bench_print_machine(stdout, "# ");
    printf("# ns/call (median); ratios ours / MuJoCo; last column: mjd_transitionFD / our FD derivatives\n");
    printf("| %-20s | %-8s | %3s | %8s | %8s | %8s | %9s | %9s | %8s | %8s | %8s | %10s | %5s | %5s | %5s | %6s |\n",
           "robot", "base", "nv", "ID", "M", "FD", "dID", "dFD", "mj_rne", "crb+fac", "mj_fwd", "mjd_trFD",
           "ID", "M", "FD", "dFD x");
    printf("|%s|\n", "---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---");
    int fails = 0;
    double worst_fd = 0, worst_dfd = INFINITY;
    for (int r = 0; r < NROBOTS; r++) {
        if (one && strcmp(one, ROBOTS[r]) != 0) continue;
        for (int floating = 0; floating <= 1; floating++) {
            if (floating && (!do_floating || !walks(ROBOTS[r]))) continue;
            if (!floating && !do_fixed) continue;
            row R;
            int nv = 0;
            if (run(dir, ROBOTS[r], floating, tmpdir, &R, &nv) != 0) { fails++; continue; }
            char label[64];
            snprintf(label, sizeof label, "%.*s", (int)(strlen(ROBOTS[r]) - 5), ROBOTS[r]);
            print_row(label, floating ? "floating" : "fixed", nv, &R);
            if (R.ratio[2] > worst_fd) worst_fd = R.ratio[2];
            if (1 / R.ratio[3] < worst_dfd) worst_dfd = 1 / R.ratio[3];
        }
    }
    rmdir(tmpdir);
    printf("# worst FD ratio %.2f (target <= 0.5); smallest FD-derivative speed-up %.1f x (target >= 30)\n",
           worst_fd, worst_dfd);
    bench_print_footer(stdout);
    return fails ? 1 : 0;
}
