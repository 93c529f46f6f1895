/*
 * mjbridge.c - our models in MuJoCo 2.2.2 and the map between the two sets
 * of coordinates (mjbridge.h). Used by tests/test_mujoco_crosscheck.c and
 * bench/bench_mujoco_*.c only.
 *
 * MJCF: the library's mbs_model_to_mjcf (src/io/write_mjcf.c, where the
 * conventions are); hinge and slide qpos are our coordinates, ball and free
 * joints are written at identity Euler parameters.
 *
 * States. Hinge/slide coordinates are ours. Ball: our relative rotation is
 * X_p A(p) X_c^T = (X_p X_c^T)(X_c A(p) X_c^T), so MuJoCo's qpos quaternion
 * is [e0, X_c e]; its qvel is the relative angular velocity in the child
 * body frame, w = 2 X_c G(p) pd, G(p) = [-e, -S(e) + e0 I]; its qacc is
 * dw/dt = 2 X_c G(p) pdd (G(pd) pd = 0). Back: pd = 1/2 G^T X_c^T w,
 * pdd = 1/2 G^T X_c^T dw/dt - p |pd|^2. Free: qpos = [global position of
 * the body origin, body quaternion], qvel = [its global velocity, w]:
 * v = X_p td + A (P_c x w), a = X_p tdd + A (P_c x dw/dt + w x (P_c x w)).
 * Tangent velocities (docs/tangent-space.md §3): ours are w' (ball) and
 * [nu'; w'] (free), the body twist of the child joint frame in its own axes,
 * with pd = 1/2 G^T w' and td = R nu' (R = A(p)). Ball: MuJoCo's velocity
 * is Xc w', its acceleration Xc dw'/dt. Free: the angular velocity w = Xc w',
 * v = Xp R nu' + A (P_c x w), a = Xp R (dnu'/dt + w' x nu') + A (P_c x dw/dt
 * + w x (P_c x w)).
 * With qd = T v (T block diagonal, one block per joint; our velocities in
 * either convention), generalized forces map as tau_mj = T^T tau and the
 * mass matrix as M_mj = T^T M T.
 *
 * URDF copies: see mjb_write_urdf_copy in mjbridge.h. MuJoCo's URDF
 * compiler names its joints after the URDF joints, as our loader names the
 * coordinates, and (with fusestatic) merges fixed links as ours does.
 */
#define _POSIX_C_SOURCE 200809L
#include "mjbridge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

/* ---------------------------------------------------------------- 3x3 helpers (row-major) */

static void mv(double y[3], const double A[9], const double x[3])
{
    for (int r = 0; r < 3; r++) y[r] = A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2];
}
static void mtv(double y[3], const double A[9], const double x[3])
{
    for (int r = 0; r < 3; r++) y[r] = A[r] * x[0] + A[3 + r] * x[1] + A[6 + r] * x[2];
}
static void mm_bt(double C[9], const double A[9], const double B[9]) /* C = A B^T */
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            C[3 * r + c] = A[3 * r] * B[3 * c] + A[3 * r + 1] * B[3 * c + 1] + A[3 * r + 2] * B[3 * c + 2];
}
static void mm(double C[9], const double A[9], const double B[9])
{
    double T[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            T[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
    memcpy(C, T, sizeof T);
}
static void cross(double c[3], const double a[3], const double b[3])
{
    double t[3] = { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] };
    memcpy(c, t, sizeof t);
}
/* Euler-parameter rotation A(p) = (2 e0^2 - 1) I + 2 (e e^T + e0 S(e)) */
static void ep_A(double A[9], const double p[4])
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = 2 * (e0 * e0 + e1 * e1) - 1; A[1] = 2 * (e1 * e2 - e0 * e3); A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3); A[4] = 2 * (e0 * e0 + e2 * e2) - 1; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2); A[7] = 2 * (e2 * e3 + e0 * e1); A[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}
/* G(p) = [-e, -S(e) + e0 I], 3 x 4 row-major */
static void ep_G(double G[12], const double p[4])
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    G[0] = -e1; G[1] = e0;  G[2] = e3;  G[3] = -e2;
    G[4] = -e2; G[5] = -e3; G[6] = e0;  G[7] = e1;
    G[8] = -e3; G[9] = e2;  G[10] = -e1; G[11] = e0;
}
/* w = 2 Xc G(p) x (x: 4) */
static void ball_w(double w[3], const double Xc[9], const double p[4], const double x[4])
{
    double G[12], t[3];
    ep_G(G, p);
    for (int r = 0; r < 3; r++) t[r] = 2 * (G[4 * r] * x[0] + G[4 * r + 1] * x[1] + G[4 * r + 2] * x[2] + G[4 * r + 3] * x[3]);
    mv(w, Xc, t);
}
/* x = 1/2 G(p)^T Xc^T w (x: 4) */
static void ball_rates(double x[4], const double Xc[9], const double p[4], const double w[3])
{
    double G[12], t[3];
    ep_G(G, p);
    mtv(t, Xc, w);
    for (int c = 0; c < 4; c++) x[c] = 0.5 * (G[c] * t[0] + G[4 + c] * t[1] + G[8 + c] * t[2]);
}

/* ---------------------------------------------------------------- MJCF */

/* the files of x into dir: 0, or -1 with a message */
static int write_files(const mbs_mjcf *x, const char *dir, char *err, size_t errlen)
{
    for (int k = 0; k < x->nfiles; k++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, x->name[k]);
        FILE *f = fopen(path, "w");
        size_t len = strlen(x->text[k]);
        int ok = f && fwrite(x->text[k], 1, len, f) == len;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) {
            snprintf(err, errlen, "cannot write %s", path);
            return -1;
        }
    }
    return 0;
}

mjModel *mjb_load_mjcf(const mbs_model *m, const char *label, char *err, size_t errlen)
{
    const char *keep = getenv("MBS_BENCH_MJCF_DIR");
    char tmpdir[] = "/tmp/mbs_mjcf_XXXXXX", dir[4096], main_path[8192];
    err[0] = '\0';
    mbs_mjcf x;
    mbs_error e;
    if (mbs_model_to_mjcf(m, label, &x, &e) != MBS_OK) {
        snprintf(err, errlen, "%s", e.msg);
        return NULL;
    }
    if (keep && keep[0]) {
        snprintf(dir, sizeof dir, "%s", keep);
    } else {
        if (!mkdtemp(tmpdir)) {
            snprintf(err, errlen, "cannot create a temporary directory");
            mbs_mjcf_free(&x);
            return NULL;
        }
        snprintf(dir, sizeof dir, "%s", tmpdir);
    }
    snprintf(main_path, sizeof main_path, "%s/%s", dir, x.name[0]);
    mjModel *mm = NULL;
    if (write_files(&x, dir, err, errlen) == 0) mm = mj_loadXML(main_path, NULL, err, (int)errlen);
    if (!(keep && keep[0])) {
        for (int k = 0; k < x.nfiles; k++) {
            char p[8192];
            snprintf(p, sizeof p, "%s/%s", dir, x.name[k]);
            unlink(p);
        }
        rmdir(dir);
    }
    mbs_mjcf_free(&x);
    if (mm) mjb_disable_extras(mm);
    return mm;
}

int mjb_fill_massless(mbs_model *m, double eps_mass, double eps_inertia)
{
    int n = 0;
    double *x = m->x;
    for (int i = 1; i <= m->nb; i++) {
        if (x[m->body[i].x_mass] != 0 || m->joint[i].type == MBS_JOINT_FIXED) continue;
        x[m->body[i].x_mass] = eps_mass;
        for (int k = 0; k < 3; k++) x[m->body[i].x_com + k] = 0;
        for (int k = 0; k < 6; k++) x[m->body[i].x_inertia + k] = k < 3 ? eps_inertia : 0;
        n++;
    }
    return n;
}

void mjb_disable_extras(mjModel *mm)
{
    mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT |
                            mjDSBL_CONTACT | mjDSBL_PASSIVE | mjDSBL_ACTUATION;
    for (int k = 0; k < mm->nv; k++) mm->dof_armature[k] = mm->dof_damping[k] = mm->dof_frictionloss[k] = 0;
}

/* ---------------------------------------------------------------- the MuJoCo copy of a URDF */

static void rpy_matrix(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
           sy = sin(rpy[2]);
    double A[9] = { cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                    sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                    -sp,     cp * sr,                cp * cr };
    memcpy(R, A, sizeof A);
}

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

static void set_attr(xmlNode *n, const char *name, const double *v, int count)
{
    char buf[256] = "";
    size_t len = 0;
    for (int k = 0; k < count; k++) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", k ? " " : "", v[k]);
    xmlSetProp(n, (const xmlChar *)name, (const xmlChar *)buf);
}

/* <inertial> in principal axes; point_masses: a zero inertia with a
 * positive mass becomes m (1e-4 m)^2 I */
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
    double Iin[6] = { attr_num(inn, "ixx"), attr_num(inn, "iyy"), attr_num(inn, "izz"),
                    attr_num(inn, "ixy"), attr_num(inn, "ixz"), attr_num(inn, "iyz") };
    double big = 0;
    for (int k = 0; k < 6; k++)
        if (fabs(Iin[k]) > big) big = fabs(Iin[k]);
    double lam[3] = { 0, 0, 0 }, V[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    if (!(big < 1e-12 * mass)) {   /* else a point mass written with round-off: zero */
        mbs_inertia_principal_axes(Iin, lam, V);
    } else if (point_masses && mass > 0) {
        lam[0] = lam[1] = lam[2] = 1e-8 * mass;
    }
    /* first principal axis: the one with the smallest z component in the
     * link frame (keeps the pitch of the rpy away from +-pi/2) */
    rpy_matrix(rpy, R);
    double W[9];
    mm(W, R, V);
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
    set_attr(o, "rpy", nrpy, 3);
    set_attr(o, "xyz", xyz, 3);
    double d6[6] = { lp[0], lp[1], lp[2], 0, 0, 0 };
    static const char *const comp[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
    for (int k = 0; k < 6; k++) set_attr(inn, comp[k], &d6[k], 1);
}

int mjb_write_urdf_copy(const char *src, const char *dst, int floating, int point_masses, int fusestatic)
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
    xmlSetProp(comp, (const xmlChar *)"fusestatic", (const xmlChar *)(fusestatic ? "true" : "false"));
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

/* ---------------------------------------------------------------- the joint map */

/* MuJoCo joints and dofs of one of ours */
static int mj_njnt_of(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_CYLINDRICAL: case MBS_JOINT_CARDAN: return 2;
    case MBS_JOINT_PLANAR: return 3;
    default: return 1;
    }
}
static int mj_nv_of(mbs_joint_type t, int nq)
{
    switch (t) {
    case MBS_JOINT_SPHERICAL: return 3;
    case MBS_JOINT_FLOATING: return 6;
    default: return nq;
    }
}
/* MuJoCo's type of the first of them */
static int mj_type_of(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_REVOLUTE: case MBS_JOINT_CARDAN: return mjJNT_HINGE;
    case MBS_JOINT_PRISMATIC: case MBS_JOINT_CYLINDRICAL: case MBS_JOINT_PLANAR: return mjJNT_SLIDE;
    case MBS_JOINT_SPHERICAL: return mjJNT_BALL;
    case MBS_JOINT_FLOATING: return mjJNT_FREE;
    default: return -1;
    }
}

int mjb_map_init(mjb_map *P, const mbs_model *m, const mjModel *mm, const char *label)
{
    memset(P, 0, sizeof *P);
    P->m = m;
    P->mm = mm;
    P->nq = m->nq;
    P->nvo = m->nv;
    P->nv = mm->nv;
    P->j = calloc((size_t)m->nb + 1, sizeof *P->j);
    if (!P->j) return -1;
    int nv = 0, njnt = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq == 0) continue;
        mjb_joint *j = &P->j[P->nj++];
        j->type = jt->type;
        j->qoff = jt->qoff;
        j->nq = jt->nq;
        j->voff = jt->voff;
        j->nvo = jt->nv;
        j->tangent = jt->velocities == MBS_VELOCITIES_TANGENT;
        j->nv = mj_nv_of(jt->type, jt->nq);
        memcpy(j->Xp, m->x + jt->x_Xp, sizeof j->Xp);
        memcpy(j->Xc, m->x + jt->x_Xc, sizeof j->Xc);
        memcpy(j->Pp, m->x + jt->x_ppoint, sizeof j->Pp);
        memcpy(j->Pc, m->x + jt->x_cpoint, sizeof j->Pc);
        int euler = jt->type == MBS_JOINT_SPHERICAL || jt->type == MBS_JOINT_FLOATING;
        int id = mj_name2id(mm, mjOBJ_JOINT, euler ? jt->name : m->coord_name[jt->qoff]);
        if (id < 0 && !euler) id = mj_name2id(mm, mjOBJ_JOINT, jt->name);
        if (id < 0) {
            fprintf(stderr, "%s: MuJoCo has no joint named %s\n", label, euler ? jt->name : m->coord_name[jt->qoff]);
            return -1;
        }
        if (mm->jnt_type[id] != mj_type_of(jt->type)) {
            fprintf(stderr, "%s: joint %s: MuJoCo type %d, ours %d\n", label, jt->name, mm->jnt_type[id], (int)jt->type);
            return -1;
        }
        j->qposadr = mm->jnt_qposadr[id];
        j->dofadr = mm->jnt_dofadr[id];
        nv += j->nv;
        njnt += mj_njnt_of(jt->type);
    }
    if (nv != P->nv || njnt != mm->njnt) {
        fprintf(stderr, "%s: MuJoCo has nv = %d and %d joints; ours map to %d and %d\n", label, P->nv, mm->njnt, nv,
                njnt);
        return -1;
    }
    return 0;
}

void mjb_map_free(mjb_map *P)
{
    free(P->j);
    P->j = NULL;
    P->nj = 0;
}

/* free joint: global orientation A of the body */
static void free_A(const mjb_joint *j, const double *q, double A[9])
{
    double Ap[9], T[9];
    ep_A(Ap, q + 3);
    mm(T, j->Xp, Ap);
    mm_bt(A, T, j->Xc);
}

/* tangent free joint: x = Xp R nu' + A u (R = A(p), A the body orientation) */
static void free_linear(const mjb_joint *j, const double *q, const double *nu, const double *u, double *x)
{
    double A[9], R[9], a[3], b[3];
    free_A(j, q, A);
    ep_A(R, q + 3);
    mv(a, R, nu);
    mv(b, j->Xp, a);
    mv(a, A, u);
    for (int k = 0; k < 3; k++) x[k] = b[k] + a[k];
}
/* the inverse: nu' = R^T Xp^T (x - A u) */
static void free_nu(const mjb_joint *j, const double *q, const double *x, const double *u, double *nu)
{
    double A[9], R[9], a[3], b[3];
    free_A(j, q, A);
    ep_A(R, q + 3);
    mv(a, A, u);
    for (int k = 0; k < 3; k++) a[k] = x[k] - a[k];
    mtv(b, j->Xp, a);
    mtv(nu, R, b);
}
/* u = P_c x dw/dt + w x (P_c x w) (dw/dt: MuJoCo's angular acceleration) */
static void free_accel_term(const mjb_joint *j, const double *w, const double *dw, double *u)
{
    double s[3], t[3];
    cross(u, j->Pc, dw);
    cross(s, j->Pc, w);
    cross(t, w, s);
    for (int k = 0; k < 3; k++) u[k] += t[k];
}

/* MuJoCo's velocity (acc = 0) or acceleration (acc = 1: v, vd ours) of a tangent joint */
static void tangent_to_mj(const mjb_joint *j, const double *q, const double *v, const double *vd, int acc, double *x)
{
    const int e = j->type == MBS_JOINT_FLOATING ? 3 : 0;
    const double *y = acc ? vd : v;
    mv(x + e, j->Xc, y + e);
    if (!e) return;
    double u[3], w[3], n[3];
    if (acc) {
        mv(w, j->Xc, v + 3);
        free_accel_term(j, w, x + 3, u);
        cross(n, v + 3, v);
        for (int k = 0; k < 3; k++) n[k] += vd[k];
    } else {
        cross(u, j->Pc, x + 3);
        memcpy(n, v, sizeof n);
    }
    free_linear(j, q, n, u, x);
}

/* the inverse: our velocity (acc = 0) or acceleration (acc = 1, v ours) of a tangent joint */
static void tangent_from_mj(const mjb_joint *j, const double *q, const double *v, const double *x, int acc, double *y)
{
    const int e = j->type == MBS_JOINT_FLOATING ? 3 : 0;
    mtv(y + e, j->Xc, x + e);
    if (!e) return;
    double u[3], w[3], n[3];
    if (acc) {
        mv(w, j->Xc, v + 3);
        free_accel_term(j, w, x + 3, u);
    } else {
        cross(u, j->Pc, x + 3);
    }
    free_nu(j, q, x, u, y);
    if (acc) {
        cross(n, v + 3, v);
        for (int k = 0; k < 3; k++) y[k] -= n[k];
    }
}

static void to_qpos(const mjb_joint *j, const double *q, double *qpos)
{
    if (j->type == MBS_JOINT_SPHERICAL) {
        qpos[0] = q[0];
        mv(qpos + 1, j->Xc, q + 1);
    } else if (j->type == MBS_JOINT_FLOATING) {
        double A[9], t[3], u[3];
        free_A(j, q, A);
        mv(t, j->Xp, q);
        mv(u, A, j->Pc);
        for (int k = 0; k < 3; k++) qpos[k] = j->Pp[k] + t[k] - u[k];
        mju_mat2Quat(qpos + 3, A);
    } else {
        for (int k = 0; k < j->nq; k++) qpos[k] = q[k];
    }
}

/* MuJoCo velocity v from our velocities qd */
static void to_qvel(const mjb_joint *j, const double *q, const double *qd, double *v)
{
    if (j->tangent) {
        tangent_to_mj(j, q, qd, NULL, 0, v);
        return;
    }
    if (j->type == MBS_JOINT_SPHERICAL) {
        ball_w(v, j->Xc, q, qd);
    } else if (j->type == MBS_JOINT_FLOATING) {
        double A[9], t[3], u[3];
        free_A(j, q, A);
        ball_w(v + 3, j->Xc, q + 3, qd + 3);
        mv(t, j->Xp, qd);
        cross(u, j->Pc, v + 3);
        mv(v, A, u);
        for (int k = 0; k < 3; k++) v[k] += t[k];
    } else {
        for (int k = 0; k < j->nq; k++) v[k] = qd[k];
    }
}

/* our velocities qd from MuJoCo's v (linear in v: qd = T v) */
static void from_qvel(const mjb_joint *j, const double *q, const double *v, double *qd)
{
    if (j->tangent) {
        tangent_from_mj(j, q, NULL, v, 0, qd);
        return;
    }
    if (j->type == MBS_JOINT_SPHERICAL) {
        ball_rates(qd, j->Xc, q, v);
    } else if (j->type == MBS_JOINT_FLOATING) {
        double A[9], u[3], s[3];
        free_A(j, q, A);
        ball_rates(qd + 3, j->Xc, q + 3, v + 3);
        cross(u, j->Pc, v + 3);
        mv(s, A, u);
        for (int k = 0; k < 3; k++) s[k] = v[k] - s[k];
        mtv(qd, j->Xp, s);
    } else {
        for (int k = 0; k < j->nq; k++) qd[k] = v[k];
    }
}

/* MuJoCo acceleration from our (q, qd, qdd) */
static void to_qacc(const mjb_joint *j, const double *q, const double *qd, const double *qdd, double *a)
{
    if (j->tangent) {
        tangent_to_mj(j, q, qd, qdd, 1, a);
        return;
    }
    if (j->type == MBS_JOINT_SPHERICAL) {
        ball_w(a, j->Xc, q, qdd);
    } else if (j->type == MBS_JOINT_FLOATING) {
        double A[9], w[3], u[3], s[3], t[3];
        free_A(j, q, A);
        ball_w(w, j->Xc, q + 3, qd + 3);
        ball_w(a + 3, j->Xc, q + 3, qdd + 3);
        cross(u, j->Pc, a + 3);          /* P_c x dw/dt */
        cross(s, j->Pc, w);
        cross(t, w, s);                  /* w x (P_c x w) */
        for (int k = 0; k < 3; k++) u[k] += t[k];
        mv(s, A, u);
        mv(t, j->Xp, qdd);
        for (int k = 0; k < 3; k++) a[k] = t[k] + s[k];
    } else {
        for (int k = 0; k < j->nq; k++) a[k] = qdd[k];
    }
}

/* our qdd from MuJoCo's acceleration (with p.pdd = -|pd|^2 on Euler-parameter rates) */
static void from_qacc(const mjb_joint *j, const double *q, const double *qd, const double *a, double *qdd)
{
    if (j->tangent) {
        tangent_from_mj(j, q, qd, a, 1, qdd);
        return;
    }
    if (j->type == MBS_JOINT_SPHERICAL || j->type == MBS_JOINT_FLOATING) {
        const int e = j->type == MBS_JOINT_FLOATING ? 3 : 0;
        const double *p = q + e, *pd = qd + e;
        double pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
        ball_rates(qdd + e, j->Xc, p, a + e);
        for (int k = 0; k < 4; k++) qdd[e + k] -= p[k] * pp;
        if (e) {
            double A[9], w[3], u[3], s[3], t[3];
            free_A(j, q, A);
            ball_w(w, j->Xc, p, pd);
            cross(u, j->Pc, a + 3);
            cross(s, j->Pc, w);
            cross(t, w, s);
            for (int k = 0; k < 3; k++) u[k] += t[k];
            mv(s, A, u);
            for (int k = 0; k < 3; k++) s[k] = a[k] - s[k];
            mtv(qdd, j->Xp, s);
        }
    } else {
        for (int k = 0; k < j->nq; k++) qdd[k] = a[k];
    }
}

/* T block (nvo x nv, row-major) of joint j at q: columns = from_qvel(e_k) */
static void t_block(const mjb_joint *j, const double *q, double *T)
{
    double e[6], c[7];
    for (int k = 0; k < j->nv; k++) {
        memset(e, 0, sizeof e);
        e[k] = 1;
        from_qvel(j, q, e, c);
        for (int r = 0; r < j->nvo; r++) T[r * j->nv + k] = c[r];
    }
}

void mjb_set_state(const mjb_map *P, mjData *d, const double *q, const double *qd)
{
    for (int k = 0; k < P->nj; k++) {
        const mjb_joint *j = &P->j[k];
        to_qpos(j, q + j->qoff, d->qpos + j->qposadr);
        to_qvel(j, q + j->qoff, qd + j->voff, d->qvel + j->dofadr);
    }
    mju_zero(d->qfrc_applied, P->nv);
    mju_zero(d->xfrc_applied, 6 * P->mm->nbody);
    mju_zero(d->ctrl, P->mm->nu);
}

void mjb_qacc_from_ours(const mjb_map *P, const double *q, const double *qd, const double *qdd, double *qacc)
{
    for (int k = 0; k < P->nj; k++) {
        const mjb_joint *j = &P->j[k];
        to_qacc(j, q + j->qoff, qd + j->voff, qdd + j->voff, qacc + j->dofadr);
    }
}

void mjb_qdd_from_mj(const mjb_map *P, const double *q, const double *qd, const double *qacc, double *qdd)
{
    for (int k = 0; k < P->nj; k++) {
        const mjb_joint *j = &P->j[k];
        from_qacc(j, q + j->qoff, qd + j->voff, qacc + j->dofadr, qdd + j->voff);
    }
}

void mjb_force_to_mj(const mjb_map *P, const double *q, const double *tau, double *tau_mj)
{
    for (int k = 0; k < P->nj; k++) {
        const mjb_joint *j = &P->j[k];
        double T[42];
        t_block(j, q + j->qoff, T);
        for (int c = 0; c < j->nv; c++) {
            double s = 0;
            for (int r = 0; r < j->nvo; r++) s += T[r * j->nv + c] * tau[j->voff + r];
            tau_mj[j->dofadr + c] = s;
        }
    }
}

void mjb_force_from_mj(const mjb_map *P, const double *q, const double *tau_mj, double *tau)
{
    for (int k = 0; k < P->nj; k++) {
        const mjb_joint *j = &P->j[k];
        const int nv = j->nv, nq = j->nvo;
        double T[42], N[36], y[6];
        t_block(j, q + j->qoff, T);
        /* tau = T y with (T^T T) y = tau_mj: Cholesky of the nv x nv block */
        for (int a = 0; a < nv; a++)
            for (int b = 0; b < nv; b++) {
                double s = 0;
                for (int r = 0; r < nq; r++) s += T[r * nv + a] * T[r * nv + b];
                N[a * nv + b] = s;
            }
        for (int c = 0; c < nv; c++) {
            double s = N[c * nv + c];
            for (int k2 = 0; k2 < c; k2++) s -= N[c * nv + k2] * N[c * nv + k2];
            N[c * nv + c] = sqrt(s);
            for (int r = c + 1; r < nv; r++) {
                double t = N[r * nv + c];
                for (int k2 = 0; k2 < c; k2++) t -= N[r * nv + k2] * N[c * nv + k2];
                N[r * nv + c] = t / N[c * nv + c];
            }
        }
        for (int r = 0; r < nv; r++) {
            double t = tau_mj[j->dofadr + r];
            for (int k2 = 0; k2 < r; k2++) t -= N[r * nv + k2] * y[k2];
            y[r] = t / N[r * nv + r];
        }
        for (int r = nv - 1; r >= 0; r--) {
            double t = y[r];
            for (int k2 = r + 1; k2 < nv; k2++) t -= N[k2 * nv + r] * y[k2];
            y[r] = t / N[r * nv + r];
        }
        for (int r = 0; r < nq; r++) {
            double s = 0;
            for (int c = 0; c < nv; c++) s += T[r * nv + c] * y[c];
            tau[j->voff + r] = s;
        }
    }
}

void mjb_mass_to_mj(const mjb_map *P, const double *q, const double *M, double *M_mj)
{
    const int nvo = P->nvo, nv = P->nv;
    for (int a = 0; a < P->nj; a++) {
        const mjb_joint *ja = &P->j[a];
        double Ta[42];
        t_block(ja, q + ja->qoff, Ta);
        for (int b = 0; b < P->nj; b++) {
            const mjb_joint *jb = &P->j[b];
            double Tb[42], MT[42];
            t_block(jb, q + jb->qoff, Tb);
            /* MT = M_ab Tb (nq_a x nv_b) */
            for (int r = 0; r < ja->nvo; r++)
                for (int c = 0; c < jb->nv; c++) {
                    double s = 0;
                    for (int k = 0; k < jb->nvo; k++)
                        s += M[(size_t)(ja->voff + r) * nvo + jb->voff + k] * Tb[k * jb->nv + c];
                    MT[r * jb->nv + c] = s;
                }
            for (int r = 0; r < ja->nv; r++)
                for (int c = 0; c < jb->nv; c++) {
                    double s = 0;
                    for (int k = 0; k < ja->nvo; k++) s += Ta[k * ja->nv + r] * MT[k * jb->nv + c];
                    M_mj[(size_t)(ja->dofadr + r) * nv + jb->dofadr + c] = s;
                }
        }
    }
}

double mjb_relerr(const double *a, const double *b, int n)
{
    double e = 0, s = 0;
    for (int k = 0; k < n; k++) {
        double t = fabs(a[k] - b[k]);
        if (t > e || isnan(t)) e = t;
        if (fabs(b[k]) > s) s = fabs(b[k]);
    }
    return s > 0 ? e / s : e;
}
