/*
 * bench_mujoco_fd.c - mbsens against MuJoCo 2.2.2 on the same models:
 * agreement of forward dynamics, inverse dynamics and the mass matrix, and
 * ns/call of each side.
 *
 * The MJCF is written from our model (src/model_impl.h): bodies nested by
 * parent, the MuJoCo body frame equal to our body frame, placed at zero
 * joint coordinates (pos = P_p - X_p X_c^T P_c, quat of X_p X_c^T, relative
 * to the parent body). Joints (axes are columns of the child joint frame
 * X_c, all at pos = the child joint point P_c):
 *   revolute     hinge, axis X_c e1
 *   prismatic    slide, axis X_c e1
 *   cylindrical  slide X_c e1, hinge X_c e1
 *   cardan       hinge X_c e1, then hinge X_c e2 in the same body (MuJoCo
 *                applies the joints of a body in order, each about its axis
 *                in the body frame as moved by the previous ones:
 *                A = A_h X_p X_c^T Rot(X_c e1, q1) Rot(X_c e2, q2)
 *                  = A_h X_p Rot(e1, q1) Rot(e2, q2) X_c^T, our definition)
 *   planar       slide X_c e2, slide X_c e3, hinge X_c e1
 *   spherical    ball
 *   floating     free (parent must be the ground)
 * and <inertial pos=CoM quat mass diaginertia> (principal axes computed
 * here to round-off, see sym_eig3), no geoms. Chains deeper than 48 bodies
 * are split into <include>d files (XML depth limit). MuJoCo 2.2.2
 * rejects moving bodies without mass ("mass and inertia of moving bodies
 * must be larger than mjMINVAL"), so massless bodies (human43: 23 D-H
 * frames) get mass 1e-12 kg and inertia 1e-14 kg m^2 on BOTH sides for the
 * agreement check; the difference this makes to our result is printed.
 *
 * States. Hinge/slide coordinates are ours. Ball: our relative rotation is
 * X_p A(p) X_c^T = (X_p X_c^T)(X_c A(p) X_c^T), so MuJoCo's qpos quaternion
 * is [e0, X_c e]; its qvel is the relative angular velocity in the child
 * body frame, w = 2 X_c G(p) pd, G(p) = [-e, -S(e) + e0 I]; its qacc is
 * dw/dt = 2 X_c G(p) pdd (G(pd) pd = 0). Back: pd = 1/2 G^T X_c^T w,
 * pdd = 1/2 G^T X_c^T dw/dt - p |pd|^2. Free: qpos = [global position of
 * the body origin, body quaternion], qvel = [its global velocity, w]:
 * v = X_p td + A (P_c x w), a = X_p tdd + A (P_c x dw/dt + w x (P_c x w)).
 * With qd = T v (T block diagonal), generalized forces map as
 * tau_mj = T^T tau and the mass matrix as M_mj = T^T M T.
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
#include <mujoco/mujoco.h>

#include "bench_common.h"
#include "model_impl.h"

#define TOL 1e-9
#define NSTATES 20
#define EPS_MASS 1e-12
#define EPS_INERTIA 1e-14

/* ---------- small 3x3 helpers (row-major) ---------- */

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
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
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

/* ---------- the map between our joints and MuJoCo's ---------- */

typedef struct jmap {
    mbs_joint_type type;
    int qoff, nq;          /* ours */
    int qposadr, dofadr, nv;   /* MuJoCo */
    double Xp[9], Xc[9], Pp[3], Pc[3];
} jmap;

static int mj_nv_of(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_SPHERICAL: return 3;
    case MBS_JOINT_FLOATING: return 6;
    default: return -1;    /* same as nq */
    }
}

/* free joint: global orientation A of the body */
static void free_A(const jmap *j, const double *q, double A[9])
{
    double Ap[9], T[9];
    ep_A(Ap, q + 3);
    mm(T, j->Xp, Ap);
    mm_bt(A, T, j->Xc);
}

static void to_qpos(const jmap *j, const double *q, double *qpos)
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

/* MuJoCo velocity v from our rates qd */
static void to_qvel(const jmap *j, const double *q, const double *qd, double *v)
{
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

/* our rates qd from MuJoCo's v (linear in v: qd = T v) */
static void from_qvel(const jmap *j, const double *q, const double *v, double *qd)
{
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
static void to_qacc(const jmap *j, const double *q, const double *qd, const double *qdd, double *a)
{
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

/* our qdd from MuJoCo's acceleration (with p.pdd = -|pd|^2) */
static void from_qacc(const jmap *j, const double *q, const double *qd, const double *a, double *qdd)
{
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

/* T block (nq x nv, row-major) of joint j at q: columns = from_qvel(e_k) */
static void t_block(const jmap *j, const double *q, double *T)
{
    double e[6], col[7];
    for (int k = 0; k < j->nv; k++) {
        memset(e, 0, sizeof e);
        e[k] = 1;
        from_qvel(j, q, e, col);
        for (int r = 0; r < j->nq; r++) T[r * j->nv + k] = col[r];
    }
}

/* ---------- MJCF writer ---------- */

static void xml_name(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void v3_attr(FILE *f, const char *name, const double *v)
{
    fprintf(f, " %s=\"%.17g %.17g %.17g\"", name, v[0], v[1], v[2]);
}

static void col(const double X[9], int k, double c[3])
{
    c[0] = X[k];
    c[1] = X[3 + k];
    c[2] = X[6 + k];
}

static void write_joint(FILE *f, int depth, const char *name, const char *type,
                        const double *pos, const double *axis)
{
    fprintf(f, "%*s<joint name=\"", 2 * depth, "");
    xml_name(f, name);
    fprintf(f, "\" type=\"%s\"", type);
    if (pos) v3_attr(f, "pos", pos);
    if (axis) v3_attr(f, "axis", axis);
    if (strcmp(type, "free") != 0) fprintf(f, " limited=\"false\"");
    fprintf(f, " damping=\"0\" stiffness=\"0\" armature=\"0\" frictionloss=\"0\"/>\n");
}

/* Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations
 * to machine precision: S = V diag(lam) V^T, V a proper rotation. MuJoCo's
 * own conversion of `fullinertia` (mju_eig3) stops early: in 2.2.2 the
 * inertia it rebuilds differs from the given one by up to ~1e-6 relative,
 * so the writer gives MuJoCo principal moments and axes instead. */
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
                /* a <- J^T a J, J = rotation in the (p, q) plane */
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
    double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
                 V[2] * (V[3] * V[7] - V[4] * V[6]);
    if (det < 0)
        for (int k = 0; k < 3; k++) V[3 * k + 2] = -V[3 * k + 2];
}

/* Writer state: deep chains are split into included files, because the
 * XML parser MuJoCo 2.2.2 uses (tinyxml2 9) rejects elements nested more
 * than 100 deep ("XML_ELEMENT_DEPTH_EXCEEDED"), i.e. chains of more than
 * about 97 bodies. An <include> inside a <body> is parsed as its own
 * document and its children are inserted in place, so the nesting of the
 * model is unlimited. */
#define MJCF_SEGMENT_DEPTH 48
typedef struct mjcf_writer {
    const mbs_model *m;
    char dir[4096], label[128];
    int nfiles;
} mjcf_writer;

static int write_body(mjcf_writer *W, FILE *f, int i, int depth);

static int write_segment(mjcf_writer *W, int i, char *fname, size_t len)
{
    char path[8192];
    snprintf(fname, len, "%s_seg%d.xml", W->label, W->nfiles++);
    snprintf(path, sizeof path, "%s/%s", W->dir, fname);
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return -1; }
    fprintf(f, "<mujoco>\n");
    int rc = write_body(W, f, i, 1);
    fprintf(f, "</mujoco>\n");
    if (fclose(f) != 0) rc = -1;
    return rc;
}

static int write_body(mjcf_writer *W, FILE *f, int i, int depth)
{
    const mbs_model *m = W->m;
    const mbs_joint_info *jt = &m->joint[i];
    const double *x = m->x;
    const double *Xp = x + jt->x_Xp, *Xc = x + jt->x_Xc, *Pp = x + jt->x_ppoint, *Pc = x + jt->x_cpoint;
    double R0[9], pos[3], t[3], quat[4], ax[3];
    mm_bt(R0, Xp, Xc);
    mv(t, R0, Pc);
    for (int k = 0; k < 3; k++) pos[k] = Pp[k] - t[k];
    mju_mat2Quat(quat, R0);
    fprintf(f, "%*s<body name=\"", 2 * depth, "");
    xml_name(f, m->body[i].name);
    fprintf(f, "\"");
    v3_attr(f, "pos", pos);
    fprintf(f, " quat=\"%.17g %.17g %.17g %.17g\">\n", quat[0], quat[1], quat[2], quat[3]);
    const int d1 = depth + 1;
    const char *const *cn = (const char *const *)m->coord_name + jt->qoff;
    switch (jt->type) {
    case MBS_JOINT_FIXED: break;
    case MBS_JOINT_REVOLUTE: col(Xc, 0, ax); write_joint(f, d1, cn[0], "hinge", Pc, ax); break;
    case MBS_JOINT_PRISMATIC: col(Xc, 0, ax); write_joint(f, d1, cn[0], "slide", Pc, ax); break;
    case MBS_JOINT_CYLINDRICAL:
        col(Xc, 0, ax);
        write_joint(f, d1, cn[0], "slide", Pc, ax);
        write_joint(f, d1, cn[1], "hinge", Pc, ax);
        break;
    case MBS_JOINT_CARDAN:
        col(Xc, 0, ax); write_joint(f, d1, cn[0], "hinge", Pc, ax);
        col(Xc, 1, ax); write_joint(f, d1, cn[1], "hinge", Pc, ax);
        break;
    case MBS_JOINT_PLANAR:
        col(Xc, 1, ax); write_joint(f, d1, cn[0], "slide", Pc, ax);
        col(Xc, 2, ax); write_joint(f, d1, cn[1], "slide", Pc, ax);
        col(Xc, 0, ax); write_joint(f, d1, cn[2], "hinge", Pc, ax);
        break;
    case MBS_JOINT_SPHERICAL: write_joint(f, d1, jt->name, "ball", Pc, NULL); break;
    case MBS_JOINT_FLOATING:
        if (jt->parent != 0) {
            fprintf(stderr, "MJCF: floating joint '%s' not on the ground (MuJoCo: free joints are top level)\n", jt->name);
            return -1;
        }
        write_joint(f, d1, jt->name, "free", NULL, NULL);
        break;
    default:
        fprintf(stderr, "MJCF: joint type of '%s' not supported\n", jt->name);
        return -1;
    }
    const double mass = x[m->body[i].x_mass];
    const double *c = x + m->body[i].x_com, *In = x + m->body[i].x_inertia;
    if (mass > 0) {
        double S[9] = { In[0], In[3], In[4], In[3], In[1], In[5], In[4], In[5], In[2] }, lam[3], V[9], iq[4];
        sym_eig3(S, lam, V);
        mju_mat2Quat(iq, V);
        fprintf(f, "%*s<inertial", 2 * d1, "");
        v3_attr(f, "pos", c);
        fprintf(f, " quat=\"%.17g %.17g %.17g %.17g\" mass=\"%.17g\"", iq[0], iq[1], iq[2], iq[3], mass);
        v3_attr(f, "diaginertia", lam);
        fprintf(f, "/>\n");
    } else if (jt->type != MBS_JOINT_FIXED) {
        fprintf(stderr, "MJCF: moving body '%s' has no mass (MuJoCo 2.2.2 rejects it)\n", m->body[i].name);
        return -1;
    }
    for (int k = i + 1; k < m->body[i].subtree_end; k++) {
        if (m->body[k].parent != i) continue;
        if (d1 >= MJCF_SEGMENT_DEPTH) {
            char fname[256];
            if (write_segment(W, k, fname, sizeof fname) != 0) return -1;
            fprintf(f, "%*s<include file=\"%s\"/>\n", 2 * d1, "", fname);
        } else if (write_body(W, f, k, d1) != 0) {
            return -1;
        }
    }
    fprintf(f, "%*s</body>\n", 2 * depth, "");
    return 0;
}

/* Write <dir>/<label>.xml (and <label>_segK.xml for deep models). */
static int write_mjcf(mjcf_writer *W, const char *main_path)
{
    const mbs_model *m = W->m;
    const double *g = m->x + m->x_gravity;
    FILE *f = fopen(main_path, "w");
    if (!f) { perror(main_path); return -1; }
    fprintf(f, "<mujoco model=\"");
    xml_name(f, m->name);
    fprintf(f, "\">\n");
    fprintf(f, "  <compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"false\" "
               "boundmass=\"0\" boundinertia=\"0\" settotalmass=\"-1\" fusestatic=\"false\"/>\n");
    fprintf(f, "  <option");
    v3_attr(f, "gravity", g);
    fprintf(f, ">\n    <flag constraint=\"disable\" equality=\"disable\" frictionloss=\"disable\" "
               "limit=\"disable\" contact=\"disable\" passive=\"disable\" clampctrl=\"disable\" "
               "warmstart=\"disable\" filterparent=\"disable\" actuation=\"disable\" sensor=\"disable\"/>\n");
    fprintf(f, "  </option>\n  <worldbody>\n");
    int rc = 0;
    for (int i = 1; i <= m->nb && rc == 0; i++)
        if (m->body[i].parent == 0) rc = write_body(W, f, i, 2);
    fprintf(f, "  </worldbody>\n</mujoco>\n");
    if (fclose(f) != 0) rc = -1;
    return rc;
}

/* Massless moving bodies get EPS_MASS and EPS_INERTIA * I (model vector
 * edited in place; the model is a private copy). Returns how many. */
static int fill_massless(mbs_model *m)
{
    int n = 0;
    for (int i = 1; i <= m->nb; i++) {
        double *x = m->x;
        if (x[m->body[i].x_mass] != 0 || m->joint[i].type == MBS_JOINT_FIXED) continue;
        x[m->body[i].x_mass] = EPS_MASS;
        for (int k = 0; k < 3; k++) x[m->body[i].x_com + k] = 0;
        for (int k = 0; k < 6; k++) x[m->body[i].x_inertia + k] = k < 3 ? EPS_INERTIA : 0;
        n++;
    }
    return n;
}

typedef struct mjpair {
    mbs_model *m;          /* our model (massless bodies filled) */
    mjModel *mm;
    jmap *jm;              /* jm[i], i = 1..nb */
    int nq, nv;
} mjpair;

static int mjpair_init(mjpair *P, mbs_model *m, const char *label)
{
    mjcf_writer W;
    const char *keep = getenv("MBS_BENCH_MJCF_DIR");
    char tmpdir[] = "/tmp/mbs_bench_mjcf_XXXXXX", main_path[8192];
    memset(&W, 0, sizeof W);
    W.m = m;
    snprintf(W.label, sizeof W.label, "%s", label);
    if (keep && keep[0]) {
        snprintf(W.dir, sizeof W.dir, "%s", keep);
    } else {
        if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return -1; }
        snprintf(W.dir, sizeof W.dir, "%s", tmpdir);
    }
    snprintf(main_path, sizeof main_path, "%s/%s.xml", W.dir, label);
    int wrc = write_mjcf(&W, main_path);
    char err[1024] = "";
    P->mm = wrc == 0 ? mj_loadXML(main_path, NULL, err, sizeof err) : NULL;
    if (!(keep && keep[0])) {
        char p[8192];
        unlink(main_path);
        for (int k = 0; k < W.nfiles; k++) {
            snprintf(p, sizeof p, "%s/%s_seg%d.xml", W.dir, label, k);
            unlink(p);
        }
        rmdir(W.dir);
    }
    if (!P->mm) {
        fprintf(stderr, "MuJoCo cannot load the MJCF of %s: %s\n", label, err);
        return -1;
    }
    P->m = m;
    P->nq = m->nq;
    P->nv = P->mm->nv;
    P->jm = calloc((size_t)m->nb + 1, sizeof(jmap));
    int nv = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        jmap *j = &P->jm[i];
        j->type = jt->type;
        j->qoff = jt->qoff;
        j->nq = jt->nq;
        j->nv = mj_nv_of(jt->type) > 0 ? mj_nv_of(jt->type) : jt->nq;
        memcpy(j->Xp, m->x + jt->x_Xp, sizeof j->Xp);
        memcpy(j->Xc, m->x + jt->x_Xc, sizeof j->Xc);
        memcpy(j->Pp, m->x + jt->x_ppoint, sizeof j->Pp);
        memcpy(j->Pc, m->x + jt->x_cpoint, sizeof j->Pc);
        nv += j->nv;
        if (jt->nq == 0) continue;
        const char *first = (jt->type == MBS_JOINT_SPHERICAL || jt->type == MBS_JOINT_FLOATING)
                                ? jt->name : m->coord_name[jt->qoff];
        int id = mj_name2id(P->mm, mjOBJ_JOINT, first);
        if (id < 0) { fprintf(stderr, "%s: MuJoCo joint '%s' missing\n", label, first); return -1; }
        j->qposadr = P->mm->jnt_qposadr[id];
        j->dofadr = P->mm->jnt_dofadr[id];
    }
    if (nv != P->nv || P->mm->nbody != m->nb + 1) {
        fprintf(stderr, "%s: MuJoCo model has nv = %d, nbody = %d; expected %d, %d\n", label,
                P->nv, P->mm->nbody, nv, m->nb + 1);
        return -1;
    }
    return 0;
}

static void mjpair_free(mjpair *P)
{
    mj_deleteModel(P->mm);
    free(P->jm);
}

static void set_mj_state(const mjpair *P, mjData *d, const double *q, const double *qd)
{
    for (int i = 1; i <= P->m->nb; i++) {
        const jmap *j = &P->jm[i];
        if (!j->nq) continue;
        to_qpos(j, q + j->qoff, d->qpos + j->qposadr);
        to_qvel(j, q + j->qoff, qd + j->qoff, d->qvel + j->dofadr);
    }
    mju_zero(d->qfrc_applied, P->nv);
    mju_zero(d->xfrc_applied, 6 * P->mm->nbody);
    mju_zero(d->ctrl, P->mm->nu);
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
        for (int i = 1; i <= m->nb; i++) {
            const jmap *j = &P->jm[i];
            if (j->nq) to_qacc(j, q + j->qoff, qd + j->qoff, qdd + j->qoff, a_ours + j->dofadr);
        }
        set_mj_state(P, md, q, qd);
        mj_forward(mm, md);
        mju_copy(a_mj, md->qacc, nv);
        double e = relerr(a_ours, a_mj, nv);
        if (e > worst.fd || isnan(e)) worst.fd = e;
        bench_check(mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, NULL, qdd), d, "FD semi");
        for (int i = 1; i <= m->nb; i++) {
            const jmap *j = &P->jm[i];
            if (j->nq) to_qacc(j, q + j->qoff, qd + j->qoff, qdd + j->qoff, a_semi + j->dofadr);
        }
        e = relerr(a_semi, a_mj, nv);
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
                double b = backward_error(nv, Mm, smooth, sol[k]), fe = relerr(sol[k], a_ref, nv);
                if (b > worst.dg.bwd[k]) worst.dg.bwd[k] = b;
                if (fe > worst.dg.fwd[k]) worst.dg.fwd[k] = fe;
            }
        }
        /* MuJoCo's smooth pipeline used in the timing (sanity: equals mj_forward) */
        mj_kinematics(mm, md); mj_comPos(mm, md); mj_crb(mm, md); mj_factorM(mm, md);
        mj_comVel(mm, md); mj_rne(mm, md, 0, md->qfrc_bias);
        for (int k = 0; k < nv; k++) smooth[k] = -md->qfrc_bias[k];
        mj_solveM(mm, md, md->qacc, smooth, 1);
        e = relerr(md->qacc, a_mj, nv);
        if (e > worst.smooth || isnan(e)) worst.smooth = e;
        /* ---- inverse dynamics at a random acceleration ---- */
        for (int k = 0; k < nv; k++) qacc_in[k] = bench_rng_range(&r, -1, 1);
        for (int i = 1; i <= m->nb; i++) {
            const jmap *j = &P->jm[i];
            if (j->nq) from_qacc(j, q + j->qoff, qd + j->qoff, qacc_in + j->dofadr, qdd + j->qoff);
        }
        bench_check(mbs_inverse_dynamics(m, d, q, qd, qdd, tau), d, "ID");
        mju_zero(t_ours, nv);
        for (int i = 1; i <= m->nb; i++) {       /* tau_mj = T^T tau */
            const jmap *j = &P->jm[i];
            double T[42];
            if (!j->nq) continue;
            t_block(j, q + j->qoff, T);
            for (int c = 0; c < j->nv; c++)
                for (int rr = 0; rr < j->nq; rr++) t_ours[j->dofadr + c] += T[rr * j->nv + c] * tau[j->qoff + rr];
        }
        mju_copy(md->qacc, qacc_in, nv);
        mj_rne(mm, md, 1, t_mj);
        e = relerr(t_ours, t_mj, nv);
        if (e > worst.id || isnan(e)) worst.id = e;
        /* ---- mass matrix ---- */
        bench_check(mbs_mass_matrix(m, d, q, M), d, "mass matrix");
        mj_fullM(mm, Mm, md->qM);
        for (int a = 1; a <= m->nb; a++) {
            const jmap *ja = &P->jm[a];
            double Ta[42];
            if (!ja->nq) continue;
            t_block(ja, q + ja->qoff, Ta);
            for (int b = 1; b <= m->nb; b++) {
                const jmap *jb = &P->jm[b];
                double Tb[42], MT[7 * 6];
                if (!jb->nq) continue;
                t_block(jb, q + jb->qoff, Tb);
                /* MT = M_ab Tb (nq_a x nv_b) */
                for (int rr = 0; rr < ja->nq; rr++)
                    for (int c = 0; c < jb->nv; c++) {
                        double sum = 0;
                        for (int k = 0; k < jb->nq; k++)
                            sum += M[(size_t)(ja->qoff + rr) * nq + jb->qoff + k] * Tb[k * jb->nv + c];
                        MT[rr * jb->nv + c] = sum;
                    }
                for (int rr = 0; rr < ja->nv; rr++)
                    for (int c = 0; c < jb->nv; c++) {
                        double sum = 0;
                        for (int k = 0; k < ja->nq; k++) sum += Ta[k * ja->nv + rr] * MT[k * jb->nv + c];
                        Mo[(size_t)(ja->dofadr + rr) * nv + jb->dofadr + c] = sum;
                    }
            }
        }
        e = relerr(Mo, Mm, nv * nv);
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
        set_mj_state(P, c[k].md, q, qd);
        mj_forward(P->mm, c[k].md);
    }
    /* the same qdd on both sides for inverse dynamics */
    for (int i = 1; i <= m_ours->nb; i++) {
        const jmap *j = &P->jm[i];
        if (j->nq) to_qacc(j, q + j->qoff, qd + j->qoff, qdd + j->qoff, qacc + j->dofadr);
    }
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
            nfill = human_nfill = fill_massless(m);
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
                double e = relerr(a1, a0, nq);
                if (e > human_eps_effect) human_eps_effect = e;
            }
            free(q); free(qd); free(a0); free(a1);
            mbs_data_free(d0); mbs_data_free(d1);
            mbs_model_free(m0);
        } else {
            nfill = fill_massless(m);
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
