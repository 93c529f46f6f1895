/*
 * write_mjcf.c - an mbs_model as MuJoCo MJCF (mbs_model_to_mjcf, model.h).
 * The library writes the text only; it never links MuJoCo.
 *
 * Bodies are nested by parent; a MuJoCo body frame is our body frame. Each
 * body is placed relative to its parent in the reference configuration
 * q_ref: the model's initial coordinates (assembled when the model has
 * closed loops) for revolute, prismatic and cylindrical joints, written as
 * the joints' `ref` so that MuJoCo's qpos equals our q; zero for cardan and
 * planar joints (their MuJoCo joints act in sequence, which a non-zero ref
 * would reorder), identity Euler parameters for spherical and floating
 * joints. Joints (axes are columns of the child joint frame X_c, all at
 * pos = the child joint point P_c):
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
 * and <inertial pos=CoM quat mass diaginertia> in principal axes
 * (mbs_inertia_principal_axes: to round-off, so that MuJoCo does not
 * convert a full inertia itself). MuJoCo 2.2.2 rejects moving bodies
 * without mass or rotational inertia: a massless one gets the mass
 * em = max(1e-12 x total mass, 1e-12), and principal moments below
 * ei = max(em x size^2, 1e-12) are raised to ei (point masses); counted in
 * mbs_mjcf.nfilled (relative effect on the mass matrix ~1e-12).
 *
 * What else carries over: gravity; point-to-point spring-dampers as spatial
 * tendons between two sites (stiffness, damping, springlength); joint
 * springs as joint stiffness/springref/damping; cut joints of closed loops
 * as equality constraints (spherical: connect; revolute: two connects on
 * its axis; fixed: weld), which MuJoCo's compiler anchors in the reference
 * configuration. Geometry for MuJoCo's viewer (no contacts: contype and
 * conaffinity 0): the URDF visual primitives, and for every body capsules
 * from its joint point to its named points and to its children's joints.
 * Not carried over (docs/viewer.md, "MJCF export"): other cut-joint types,
 * driving constraints, joint and body loads, time functions, contact and
 * tire elements, objectives, parameters, URDF limits.
 *
 * Chains deeper than MJCF_SEGMENT_DEPTH are split into <include>d files:
 * the XML parser of MuJoCo 2.2.2 (tinyxml2) rejects elements nested more
 * than 100 deep; an <include> inside a <body> is parsed as its own document
 * and its children are inserted in place.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/constraints.h"
#include "mbsens/data.h"
#include "mbsens/kinematics.h"
#include "mbsens/model.h"
#include "base/error.h"
#include "model/model_impl.h"
#include "model/model_util.h"

#define MJCF_SEGMENT_DEPTH 48

typedef struct mjcf_writer {
    const mbs_model *m;
    const char *base;
    mbs_mjcf *out;
    mbs_error *err;
    double *A, *o;          /* global poses at q_ref: 9 and 3 per body, ground included */
    double *qref;
    double size;            /* model size (model_size) */
    double radius;          /* of the figure capsules */
    double mass;            /* total mass */
} mjcf_writer;

/* ---------------------------------------------------------------- output */

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

static void quat_attr(FILE *f, const char *name, const double R[9])
{
    double q[4];
    mbs_rotation_quaternion(R, q);
    fprintf(f, " %s=\"%.17g %.17g %.17g %.17g\"", name, q[0], q[1], q[2], q[3]);
}

static void col(const double X[9], int k, double c[3])
{
    c[0] = X[k];
    c[1] = X[3 + k];
    c[2] = X[6 + k];
}

/* ---------------------------------------------------------------- reference configuration */

/* model size: the largest distance of a point or joint point from its body origin */
static double model_size(const mbs_model *m)
{
    double s = 0;
    for (int k = 0; k < m->npoint; k++) {
        const double *p = m->x + m->point[k].x;
        s = fmax(s, sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
    }
    for (int i = 1; i <= m->nb; i++) {
        const double *p = m->x + m->joint[i].x_ppoint, *c = m->x + m->body[i].x_com;
        s = fmax(s, sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
        s = fmax(s, sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]));
    }
    return s > 0 ? s : 1;
}

/* MuJoCo anchors the loop equalities in the reference configuration: the
 * loops must be closed there (to 1e-8 of the model size). */
static int loops_closed(mjcf_writer *W, mbs_data *d)
{
    const mbs_model *m = W->m;
    const int nrows = mbs_model_nloop_constraints(m);
    if (nrows == 0) return MBS_OK;
    double *phi = malloc(sizeof *phi * (size_t)mbs_model_nconstraints(m));
    if (!phi) return mbs_error_set(W->err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    int rc = mbs_constraints(m, d, W->qref, 0, phi), worst = 0;
    for (int r = 1; r < nrows; r++)
        if (fabs(phi[r]) > fabs(phi[worst])) worst = r;
    if (!rc && !(fabs(phi[worst]) <= 1e-8 * W->size))
        rc = mbs_error_set(W->err, MBS_ERR_UNSUPPORTED,
                           "%s: MJCF: the loops are not closed in MuJoCo's reference configuration (%s: %g): "
                           "cardan, planar, spherical and floating joints are written at zero coordinates, "
                           "which must then assemble", m->name, m->con.row_name[worst], phi[worst]);
    else if (rc)
        rc = mbs_error_set(W->err, rc, "%s: MJCF: %s", m->name, mbs_data_error(d));
    free(phi);
    return rc;
}

static int reference_poses(mjcf_writer *W)
{
    const mbs_model *m = W->m;
    const int nb1 = m->nb + 1;
    W->qref = calloc((size_t)m->nq + 1, sizeof *W->qref);
    W->A = malloc(sizeof *W->A * 9 * (size_t)nb1);
    W->o = malloc(sizeof *W->o * 3 * (size_t)nb1);
    double *qd = calloc((size_t)m->nv + 1, sizeof *qd);
    mbs_data *d = mbs_data_create(m, W->err);
    int rc = MBS_OK;
    if (!W->qref || !W->A || !W->o || !qd || !d) {
        rc = d ? mbs_error_set(W->err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory") : MBS_ERR_NOMEM;
        goto done;
    }
    mbs_model_initial_state(m, W->qref, qd);
    if (m->con.ncut > 0 || m->con.ndriver > 0) {
        rc = mbs_assemble(m, d, W->qref, 0, NULL, NULL);
        if (rc) {
            mbs_error_set(W->err, rc, "%s: MJCF: the initial configuration does not assemble: %s", m->name,
                          mbs_data_error(d));
            goto done;
        }
    }
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        double *q = W->qref + jt->qoff;
        if (jt->type == MBS_JOINT_REVOLUTE || jt->type == MBS_JOINT_PRISMATIC || jt->type == MBS_JOINT_CYLINDRICAL)
            continue;
        for (int k = 0; k < jt->nq; k++) q[k] = 0;
        if (jt->quat >= 0) q[jt->quat] = 1;
    }
    if ((rc = loops_closed(W, d))) goto done;
    rc = mbs_kinematics(m, d, W->qref, NULL, NULL);
    if (rc) {
        mbs_error_set(W->err, rc, "%s: MJCF: %s", m->name, mbs_data_error(d));
        goto done;
    }
    for (int i = 0; i < nb1; i++) mbs_body_pose(d, i, W->A + 9 * i, W->o + 3 * i);
done:
    free(qd);
    mbs_data_free(d);
    return rc;
}

/* placement of body i in its parent's frame at q_ref */
static void relative_pose(const mjcf_writer *W, int i, double R[9], double p[3])
{
    const int h = W->m->body[i].parent;
    const double *Ah = W->A + 9 * h, *Ai = W->A + 9 * i, *oh = W->o + 3 * h, *oi = W->o + 3 * i;
    double d[3] = { oi[0] - oh[0], oi[1] - oh[1], oi[2] - oh[2] };
    for (int r = 0; r < 3; r++) {
        p[r] = Ah[r] * d[0] + Ah[3 + r] * d[1] + Ah[6 + r] * d[2];
        for (int c = 0; c < 3; c++) R[3 * r + c] = Ah[r] * Ai[c] + Ah[3 + r] * Ai[3 + c] + Ah[6 + r] * Ai[6 + c];
    }
}

/* ---------------------------------------------------------------- bodies */

/* joint springs on coordinate `coord`: summed stiffness and damping, the
 * free coordinate of the last one; 0 if none */
static int joint_spring_of(const mbs_model *m, int coord, double *k, double *c, double *q0)
{
    int n = 0;
    *k = *c = *q0 = 0;
    for (int e = 0; e < m->nforce; e++) {
        const mbs_force_info *fe = &m->force[e];
        if (fe->type != MBS_FORCE_JOINT_SPRING || fe->coord != coord) continue;
        *k += m->x[fe->x_stiffness];
        *c += m->x[fe->x_damping];
        *q0 = m->x[fe->x_free];
        n++;
    }
    return n;
}

/* one MuJoCo joint; coord: the coordinate it carries (-1: ball, free) */
static void write_joint(const mbs_model *m, FILE *f, int depth, int coord, const char *name, const char *type,
                        const double *pos, const double *axis, double ref)
{
    fprintf(f, "%*s<joint name=\"", 2 * depth, "");
    xml_name(f, name);
    fprintf(f, "\" type=\"%s\"", type);
    if (pos) v3_attr(f, "pos", pos);
    if (axis) v3_attr(f, "axis", axis);
    if (ref != 0) fprintf(f, " ref=\"%.17g\"", ref);
    if (strcmp(type, "free") != 0) fprintf(f, " limited=\"false\"");
    double k, c, q0;
    if (coord >= 0 && joint_spring_of(m, coord, &k, &c, &q0))
        fprintf(f, " stiffness=\"%.17g\" springref=\"%.17g\" damping=\"%.17g\"", k, q0, c);
    fprintf(f, " armature=\"0\" frictionloss=\"0\"/>\n");
}

static int write_joints(mjcf_writer *W, FILE *f, int i, int d1)
{
    const mbs_model *m = W->m;
    const mbs_joint_info *jt = &m->joint[i];
    const double *Xc = m->x + jt->x_Xc, *Pc = m->x + jt->x_cpoint, *qr = W->qref + jt->qoff;
    const char *const *cn = (const char *const *)m->coord_name + jt->qoff;
    const int q = jt->qoff;
    double ax[3];
    switch (jt->type) {
    case MBS_JOINT_FIXED: break;
    case MBS_JOINT_REVOLUTE: col(Xc, 0, ax); write_joint(m, f, d1, q, cn[0], "hinge", Pc, ax, qr[0]); break;
    case MBS_JOINT_PRISMATIC: col(Xc, 0, ax); write_joint(m, f, d1, q, cn[0], "slide", Pc, ax, qr[0]); break;
    case MBS_JOINT_CYLINDRICAL:
        col(Xc, 0, ax);
        write_joint(m, f, d1, q, cn[0], "slide", Pc, ax, qr[0]);
        write_joint(m, f, d1, q + 1, cn[1], "hinge", Pc, ax, qr[1]);
        break;
    case MBS_JOINT_CARDAN:
        col(Xc, 0, ax); write_joint(m, f, d1, q, cn[0], "hinge", Pc, ax, 0);
        col(Xc, 1, ax); write_joint(m, f, d1, q + 1, cn[1], "hinge", Pc, ax, 0);
        break;
    case MBS_JOINT_PLANAR:
        col(Xc, 1, ax); write_joint(m, f, d1, q, cn[0], "slide", Pc, ax, 0);
        col(Xc, 2, ax); write_joint(m, f, d1, q + 1, cn[1], "slide", Pc, ax, 0);
        col(Xc, 0, ax); write_joint(m, f, d1, q + 2, cn[2], "hinge", Pc, ax, 0);
        break;
    case MBS_JOINT_SPHERICAL: write_joint(m, f, d1, -1, jt->name, "ball", Pc, NULL, 0); break;
    case MBS_JOINT_FLOATING:
        if (jt->parent != 0)
            return mbs_error_set(W->err, MBS_ERR_UNSUPPORTED, "%s: MJCF: floating joint '%s' not on the ground "
                                 "(MuJoCo's free joints are top level)", m->name, jt->name);
        write_joint(m, f, d1, -1, jt->name, "free", NULL, NULL, 0);
        break;
    default:
        return mbs_error_set(W->err, MBS_ERR_UNSUPPORTED, "%s: MJCF: joint type of '%s' not supported", m->name,
                             jt->name);
    }
    return MBS_OK;
}

/* MuJoCo 2.2.2 rejects moving bodies whose mass or principal moments are
 * not above 1e-15: those get the placeholders em and ei */
static void placeholders(const mjcf_writer *W, double *em, double *ei)
{
    *em = fmax(1e-12 * W->mass, 1e-12);
    *ei = fmax(*em * W->size * W->size, 1e-12);
}

static int write_inertial(mjcf_writer *W, FILE *f, int i, int d1)
{
    const mbs_model *m = W->m;
    const int moving = m->joint[i].type != MBS_JOINT_FIXED;
    const double mass = m->x[m->body[i].x_mass];
    const double *c = m->x + m->body[i].x_com, *In = m->x + m->body[i].x_inertia;
    double em, ei;
    placeholders(W, &em, &ei);
    if (mass > 0) {
        double lam[3], V[9];
        int filled = 0;
        mbs_inertia_principal_axes(In, lam, V);
        for (int k = 0; k < 3 && moving; k++)
            if (!(lam[k] >= ei)) {
                lam[k] = fmax(lam[k], ei);
                filled = 1;
            }
        if (filled) fprintf(f, "%*s<!-- principal moments raised to %.3g at least for MuJoCo -->\n", 2 * d1, "", ei);
        W->out->nfilled += filled;
        fprintf(f, "%*s<inertial", 2 * d1, "");
        v3_attr(f, "pos", c);
        quat_attr(f, "quat", V);
        fprintf(f, " mass=\"%.17g\"", mass);
        v3_attr(f, "diaginertia", lam);
        fprintf(f, "/>\n");
    } else if (moving) {
        fprintf(f, "%*s<!-- massless in mbsens: a negligible mass for MuJoCo -->\n", 2 * d1, "");
        fprintf(f, "%*s<inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n", 2 * d1, "",
                em, ei, ei, ei);
        W->out->nfilled++;
    }
    return MBS_OK;
}

/* a capsule from a to b, unless short or already drawn to b (done: the
 * ends drawn so far, *n of them, at most FIGURE_MAX) */
#define FIGURE_MAX 64
static void capsule(const mjcf_writer *W, FILE *f, int depth, const double *a, const double *b,
                    const double **done, int *n)
{
    double d[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
    if (sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) < W->radius) return;
    for (int k = 0; k < *n; k++)
        if (done[k][0] == b[0] && done[k][1] == b[1] && done[k][2] == b[2]) return;
    if (*n < FIGURE_MAX) done[(*n)++] = b;
    fprintf(f, "%*s<geom type=\"capsule\" size=\"%.6g\" fromto=\"%.17g %.17g %.17g %.17g %.17g %.17g\" "
               "contype=\"0\" conaffinity=\"0\" group=\"1\" rgba=\"0.55 0.6 0.7 1\"/>\n", 2 * depth, "",
            W->radius, a[0], a[1], a[2], b[0], b[1], b[2]);
}

/* the figure of body i: capsules from its joint point to its named points,
 * its centre of mass and its children's joint points */
static void write_figure(const mjcf_writer *W, FILE *f, int i, int d1)
{
    const mbs_model *m = W->m;
    const double *P = m->x + m->joint[i].x_cpoint, *done[FIGURE_MAX];
    int n = 0;
    for (int k = i + 1; k < m->body[i].subtree_end; k++)
        if (m->body[k].parent == i) capsule(W, f, d1, P, m->x + m->joint[k].x_ppoint, done, &n);
    for (int k = 0; k < m->npoint; k++)
        if (m->point[k].body == i) capsule(W, f, d1, P, m->x + m->point[k].x, done, &n);
    capsule(W, f, d1, P, m->x + m->body[i].x_com, done, &n);
}

/* sites of the spring-dampers attached to body b */
static void write_sites(const mjcf_writer *W, FILE *f, int b, int depth)
{
    const mbs_model *m = W->m;
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        if (fe->type != MBS_FORCE_SPRING_DAMPER) continue;
        for (int e = 0; e < 2; e++) {
            if (fe->body[e] != b) continue;
            fprintf(f, "%*s<site name=\"", 2 * depth, "");
            xml_name(f, fe->name);
            fprintf(f, "_%d\"", e + 1);
            v3_attr(f, "pos", m->x + fe->x_point[e]);
            fprintf(f, " size=\"%.6g\"/>\n", W->radius);
        }
    }
}

static int write_body(mjcf_writer *W, FILE *f, int i, int depth);

static int add_file(mjcf_writer *W, char *name, char *text)
{
    mbs_mjcf *x = W->out;
    char **nn = realloc(x->name, sizeof *nn * (size_t)(x->nfiles + 1));
    if (nn) x->name = nn;
    char **nt = nn ? realloc(x->text, sizeof *nt * (size_t)(x->nfiles + 1)) : NULL;
    if (nt) x->text = nt;
    if (!nn || !nt) {
        free(name);
        free(text);
        return mbs_error_set(W->err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    }
    x->name[x->nfiles] = name;
    x->text[x->nfiles] = text;
    x->nfiles++;
    return MBS_OK;
}

/* body k and its subtree as an included file; its name into fname */
static int write_segment(mjcf_writer *W, int k, char *fname, size_t len)
{
    snprintf(fname, len, "%s_seg%d.xml", W->base, W->out->nfiles);
    char *text = NULL, *name = mbs_strdup(fname);
    size_t tlen = 0;
    /* reserve the slot first, so that segment numbers follow file order */
    int slot = W->out->nfiles;
    if (!name || add_file(W, name, NULL)) return mbs_error_set(W->err, MBS_ERR_NOMEM, "out of memory");
    FILE *f = open_memstream(&text, &tlen);
    if (!f) return mbs_error_set(W->err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    fprintf(f, "<mujoco>\n");
    int rc = write_body(W, f, k, 1);
    fprintf(f, "</mujoco>\n");
    if (fclose(f) != 0 && !rc) rc = mbs_error_set(W->err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    W->out->text[slot] = text;
    return rc;
}

static int write_body(mjcf_writer *W, FILE *f, int i, int depth)
{
    const mbs_model *m = W->m;
    double R[9], p[3];
    relative_pose(W, i, R, p);
    fprintf(f, "%*s<body name=\"", 2 * depth, "");
    xml_name(f, m->body[i].name);
    fprintf(f, "\"");
    v3_attr(f, "pos", p);
    quat_attr(f, "quat", R);
    fprintf(f, ">\n");
    const int d1 = depth + 1;
    int rc = write_joints(W, f, i, d1);
    if (!rc) rc = write_inertial(W, f, i, d1);
    if (rc) return rc;
    if (!mbs_visual_geoms_mjcf(m, i, f, 2 * d1)) write_figure(W, f, i, d1);
    write_sites(W, f, i, d1);
    for (int k = i + 1; k < m->body[i].subtree_end; k++) {
        if (m->body[k].parent != i) continue;
        if (d1 >= MJCF_SEGMENT_DEPTH) {
            char fname[512];
            if ((rc = write_segment(W, k, fname, sizeof fname))) return rc;
            fprintf(f, "%*s<include file=\"", 2 * d1, "");
            xml_name(f, fname);
            fprintf(f, "\"/>\n");
        } else if ((rc = write_body(W, f, k, d1))) {
            return rc;
        }
    }
    fprintf(f, "%*s</body>\n", 2 * depth, "");
    return MBS_OK;
}

/* ---------------------------------------------------------------- forces and loops */

static void write_tendons(const mjcf_writer *W, FILE *f)
{
    const mbs_model *m = W->m;
    int any = 0;
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        if (fe->type != MBS_FORCE_SPRING_DAMPER) continue;
        if (!any++) fprintf(f, "  <tendon>\n");
        fprintf(f, "    <spatial name=\"");
        xml_name(f, fe->name);
        fprintf(f, "\" stiffness=\"%.17g\" damping=\"%.17g\" springlength=\"%.17g\" width=\"%.6g\">\n",
                m->x[fe->x_stiffness], m->x[fe->x_damping], m->x[fe->x_free], 0.5 * W->radius);
        for (int e = 1; e <= 2; e++) {
            fprintf(f, "      <site site=\"");
            xml_name(f, fe->name);
            fprintf(f, "_%d\"/>\n", e);
        }
        fprintf(f, "    </spatial>\n");
    }
    if (any) fprintf(f, "  </tendon>\n");
}

/* point of a cut joint side in the body frame, shifted by s along its axis */
static void cut_point(const mbs_model *m, const mbs_cut_info *c, int side, double s, double r[3])
{
    const double *P = m->x + (side ? c->x_cpoint : c->x_ppoint), *X = m->x + (side ? c->x_Xc : c->x_Xp);
    for (int k = 0; k < 3; k++) r[k] = P[k] + s * X[3 * k];
}

/* MuJoCo's name of body b (the ground is its "world") */
static const char *mj_body_name(const mbs_model *m, int b) { return b == 0 ? "world" : m->body[b].name; }

static void write_pair(FILE *f, const char *what, const mbs_model *m, const mbs_cut_info *c)
{
    fprintf(f, "    <%s body1=\"", what);
    xml_name(f, mj_body_name(m, c->body[0]));
    fprintf(f, "\" body2=\"");
    xml_name(f, mj_body_name(m, c->body[1]));
    fprintf(f, "\"");
}

static void write_connect(FILE *f, const mbs_model *m, const mbs_cut_info *c, const double *anchor)
{
    write_pair(f, "connect", m, c);
    v3_attr(f, "anchor", anchor);
    fprintf(f, "/>\n");
}

static int write_equalities(mjcf_writer *W, FILE *f)
{
    const mbs_model *m = W->m;
    if (m->con.ncut == 0) return MBS_OK;
    fprintf(f, "  <equality>\n");
    for (int k = 0; k < m->con.ncut; k++) {
        const mbs_cut_info *c = &m->con.cut[k];
        double a[3];
        if (c->body[0] == 0 && c->body[1] == 0) continue;
        switch (c->type) {
        case MBS_JOINT_SPHERICAL:
            cut_point(m, c, 0, 0, a);
            write_connect(f, m, c, a);
            break;
        case MBS_JOINT_REVOLUTE:
            cut_point(m, c, 0, 0, a);
            write_connect(f, m, c, a);
            cut_point(m, c, 0, W->radius * 10, a);
            write_connect(f, m, c, a);
            break;
        case MBS_JOINT_FIXED:
            write_pair(f, "weld", m, c);
            fprintf(f, "/>\n");
            break;
        default:
            return mbs_error_set(W->err, MBS_ERR_UNSUPPORTED, "%s: MJCF: cut joint %s: type %s has no MuJoCo "
                                 "equality (spherical, revolute and fixed cut joints do)", m->name, c->name,
                                 mbs_joint_type_name(c->type));
        }
    }
    fprintf(f, "  </equality>\n");
    return MBS_OK;
}

/* ---------------------------------------------------------------- document */

static int write_main(mjcf_writer *W, FILE *f)
{
    const mbs_model *m = W->m;
    fprintf(f, "<mujoco model=\"");
    xml_name(f, m->name ? m->name : "model");
    fprintf(f, "\">\n");
    fprintf(f, "  <compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"false\" "
               "boundmass=\"0\" boundinertia=\"0\" settotalmass=\"-1\" fusestatic=\"false\"/>\n");
    fprintf(f, "  <option");
    v3_attr(f, "gravity", m->x + m->x_gravity);
    fprintf(f, ">\n    <flag contact=\"disable\"/>\n  </option>\n");
    fprintf(f, "  <visual>\n    <global offwidth=\"1280\" offheight=\"960\"/>\n  </visual>\n");
    fprintf(f, "  <worldbody>\n");
    fprintf(f, "    <light pos=\"0 0 %.6g\" dir=\"0 0 -1\" directional=\"true\"/>\n", 10 * model_size(m));
    write_sites(W, f, 0, 2);
    int rc = 0;
    for (int i = 1; i <= m->nb && rc == 0; i++)
        if (m->body[i].parent == 0) rc = write_body(W, f, i, 2);
    fprintf(f, "  </worldbody>\n");
    if (rc) return rc;
    write_tendons(W, f);
    return write_equalities(W, f);
}

int mbs_model_to_mjcf(const mbs_model *m, const char *base, mbs_mjcf *out, mbs_error *err)
{
    if (!m || !base || !out) return mbs_error_set(err, MBS_ERR_ARG, "mbs_model_to_mjcf: NULL argument");
    memset(out, 0, sizeof *out);
    mjcf_writer W;
    memset(&W, 0, sizeof W);
    W.m = m;
    W.base = base;
    W.out = out;
    W.err = err;
    W.size = model_size(m);
    W.radius = 0.02 * W.size;
    for (int i = 1; i <= m->nb; i++) W.mass += m->x[m->body[i].x_mass];
    if (!(W.mass > 0)) W.mass = 1;
    int rc = reference_poses(&W);
    char *name = NULL, *text = NULL;
    size_t len = 0;
    if (!rc) {
        size_t n = strlen(base) + 5;
        name = malloc(n);
        if (name) snprintf(name, n, "%s.xml", base);
        rc = name ? add_file(&W, name, NULL) : mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    }
    FILE *f = rc ? NULL : open_memstream(&text, &len);
    if (!rc && !f) rc = mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
    if (f) {
        rc = write_main(&W, f);
        fprintf(f, "</mujoco>\n");
        if (fclose(f) != 0 && !rc) rc = mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_mjcf: out of memory");
        out->text[0] = text;
    }
    free(W.A);
    free(W.o);
    free(W.qref);
    if (rc) mbs_mjcf_free(out);
    return rc;
}

void mbs_mjcf_free(mbs_mjcf *x)
{
    if (!x) return;
    for (int k = 0; k < x->nfiles; k++) {
        free(x->name[k]);
        free(x->text[k]);
    }
    free(x->name);
    free(x->text);
    memset(x, 0, sizeof *x);
}
