/*
 * load_urdf.c - URDF robot descriptions (docs/model-format.md, "URDF") with
 * libxml2.
 *
 * Only the <link> and <joint> children of <robot> (and the <material>s
 * that visuals name) are read; everything else (transmissions, gazebo
 * extensions, <mimic>) is ignored. Visual and collision geometry is kept
 * as model data for viewers (add_visuals; the dynamics never read it). The
 * URDF tree is turned into bodies:
 *
 *   - every link reached from the root through fixed joints only belongs to
 *     the same rigid group as its parent (merging); a group is headed by the
 *     root link or by the child link of a moving joint, and it becomes one
 *     body named after its head link, in the head link's frame, with the
 *     composite mass, centre of mass and inertia of its links. The frames of
 *     the other links of a group stay addressable: a named point LINK at the
 *     link's origin and vectors LINK_x, LINK_y, LINK_z along its axes.
 *   - the root group is the ground (default) or moves on a floating joint
 *     "root_joint" from the ground (mbs_urdf_options.floating_base);
 *   - floating and spherical joints (the floating base's included) take
 *     Euler-parameter rates or tangent velocities (mbs_urdf_options.velocities).
 *   - a moving URDF joint with origin T = (xyz, rpy) (parent link frame ->
 *     joint frame) and axis a (joint frame, default (1,0,0)) becomes our joint
 *     with parent point T.xyz and parent frame X_p = R(rpy) [a, r, a x r]
 *     (both composed with the parent link's placement in its group), child
 *     point 0 and child frame X_c = [a, r, a x r]: at q = 0 the child link
 *     frame is the joint frame, and A_child = A_parent X_p R(q) X_c^T.
 *     The reference direction r is deterministic: r = Rmin(z -> a) e_x, the
 *     image of x under the smallest rotation taking z to a (MuJoCo's
 *     convention for planar joints, so that planar coordinates agree).
 *
 * Errors name "file:line". libxml2 is initialized once per process with
 * call_once (xmlInitParser is not reentrant); the library never calls
 * xmlCleanupParser, which would break other libxml2 users of the process.
 */
#define _POSIX_C_SOURCE 200809L   /* fileno */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "mbsens/model.h"
#include "builder/builder.h"
#include "base/hashmap.h"
#include "model/model_impl.h"
#include "model/model_util.h"
#include "io/load.h"

enum { UJ_FIXED, UJ_REVOLUTE, UJ_CONTINUOUS, UJ_PRISMATIC, UJ_FLOATING, UJ_PLANAR, UJ_SPHERICAL };
static const char *const UJ_NAMES[] = { "fixed", "revolute", "continuous", "prismatic", "floating", "planar",
                                        "spherical", NULL };

typedef struct {
    const char *name;      /* owned by the XML document */
    int line;
    int has_inertial, inertia_line;
    double mass, com[3], I[6];   /* I about the CoM, link axes: xx yy zz xy xz yz */
    double Iraw[6];        /* I as given (before balancing) */
    int parent_joint;      /* -1: none (root) */
    int group;             /* head link of its rigid group */
    double R[9], p[3];     /* placement in the head link's frame */
    int body;              /* builder handle of the group (0: ground) */
    int bad_triangle;      /* its inertia violates the triangle inequality */
    double tiny;           /* largest inertia entry when taken as a point mass (round-off), else 0 */
    const xmlNode *node;
} ulink;

typedef struct {
    const char *name;
    int line, type;
    int parent, child;     /* link indices */
    double xyz[3], rpy[3], axis[3];
    int has_limit;
    double lower, upper, effort, velocity;
    int has_dynamics;
    double damping, friction;
} ujoint;

typedef struct {
    const char *file;
    mbs_error *err;
    const mbs_urdf_options *o;
    int nl, nj;
    ulink *link;
    ujoint *joint;
    mbs_hashmap link_map, joint_map;   /* name -> index */
    const xmlNode *robot;
} uctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int ufail(uctx *c, int line, const char *fmt, ...)
{
    char what[MBS_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0) return mbs_error_set(c->err, MBS_ERR_MODEL, "%s:%d: %s", c->file, line, what);
    return mbs_error_set(c->err, MBS_ERR_MODEL, "%s: %s", c->file, what);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void uwarn(uctx *c, int line, const char *fmt, ...)
{
    if (!c->o->warn) return;
    char what[MBS_ERROR_MSG_LEN], msg[MBS_ERROR_MSG_LEN + 300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s:%d: %s", c->file, line, what);
    c->o->warn(c->o->warn_user, msg);
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNode *child_elem(const xmlNode *n, const char *name)
{
    for (xmlNode *k = n->children; k; k = k->next)
        if (is_elem(k, name)) return k;
    return NULL;
}

static int line_of(const xmlNode *n) { return (int)xmlGetLineNo(n); }

/* Attribute value as a string (owned by the document), NULL if absent. */
static const char *attr(const xmlNode *n, const char *name)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        if (!a->name || strcmp((const char *)a->name, name) != 0) continue;
        if (a->children && a->children->type == XML_TEXT_NODE && a->children->content)
            return (const char *)a->children->content;
        return "";
    }
    return NULL;
}

/* Exactly n finite numbers separated by white space. */
static int parse_numbers(uctx *c, const xmlNode *n, const char *aname, int count, double *out, int required,
                         const double *def)
{
    const char *s = attr(n, aname);
    if (!s) {
        if (required)
            return ufail(c, line_of(n), "<%s>: missing attribute \"%s\"", (const char *)n->name, aname);
        for (int k = 0; k < count; k++) out[k] = def ? def[k] : 0;
        return MBS_OK;
    }
    const char *p = s;
    for (int k = 0; k < count; k++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v))
            return ufail(c, line_of(n), "<%s %s=\"%s\">: expected %d finite number%s", (const char *)n->name,
                         aname, s, count, count == 1 ? "" : "s");
        out[k] = v;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p)
        return ufail(c, line_of(n), "<%s %s=\"%s\">: expected %d number%s, got more", (const char *)n->name, aname,
                     s, count, count == 1 ? "" : "s");
    return MBS_OK;
}

/* ---------------------------------------------------------------- 3x3 helpers (row-major) */

static void rpy_matrix(const double rpy[3], double R[9])
{
    /* R = Rz(yaw) Ry(pitch) Rx(roll) */
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
           sy = sin(rpy[2]);
    R[0] = cy * cp; R[1] = cy * sp * sr - sy * cr; R[2] = cy * sp * cr + sy * sr;
    R[3] = sy * cp; R[4] = sy * sp * sr + cy * cr; R[5] = sy * sp * cr - cy * sr;
    R[6] = -sp;     R[7] = cp * sr;                R[8] = cp * cr;
}

static void mmul(double C[9], const double A[9], const double B[9])
{
    double T[9];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) T[3 * r + k] = A[3 * r] * B[k] + A[3 * r + 1] * B[3 + k] + A[3 * r + 2] * B[6 + k];
    memcpy(C, T, sizeof T);
}

static void mvec(double y[3], const double A[9], const double x[3])
{
    double t[3];
    for (int r = 0; r < 3; r++) t[r] = A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2];
    memcpy(y, t, sizeof t);
}

static void sym_from6(double S[9], const double I[6])
{
    S[0] = I[0]; S[4] = I[1]; S[8] = I[2];
    S[1] = S[3] = I[3];
    S[2] = S[6] = I[4];
    S[5] = S[7] = I[5];
}

static void sym_to6(double I[6], const double S[9])
{
    I[0] = S[0]; I[1] = S[4]; I[2] = S[8];
    I[3] = 0.5 * (S[1] + S[3]);
    I[4] = 0.5 * (S[2] + S[6]);
    I[5] = 0.5 * (S[5] + S[7]);
}

/* I6 <- R I6 R^T */
static void rotate_inertia(double I[6], const double R[9])
{
    double S[9], T[9], Rt[9];
    sym_from6(S, I);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) Rt[3 * r + k] = R[3 * k + r];
    mmul(T, R, S);
    mmul(S, T, Rt);
    sym_to6(I, S);
}

/* Reference direction perpendicular to the unit axis a: r = Rmin(z -> a) e_x. */
static void ref_for_axis(const double a[3], double r[3])
{
    double d = 1 + a[2];
    if (d < 1e-9) {
        r[0] = 1; r[1] = 0; r[2] = 0;   /* a = -z: rotation by pi about x */
        return;
    }
    r[0] = 1 - a[0] * a[0] / d;
    r[1] = -a[0] * a[1] / d;
    r[2] = -a[0];
}

/* ---------------------------------------------------------------- parsing */

static int find_link(const uctx *c, const char *name)
{
    return mbs_hashmap_get(&c->link_map, 0, name);
}

static int parse_origin(uctx *c, const xmlNode *parent, double xyz[3], double rpy[3])
{
    const xmlNode *o = child_elem(parent, "origin");
    xyz[0] = xyz[1] = xyz[2] = 0;
    rpy[0] = rpy[1] = rpy[2] = 0;
    if (!o) return MBS_OK;
    int rc = parse_numbers(c, o, "xyz", 3, xyz, 0, NULL);
    if (!rc) rc = parse_numbers(c, o, "rpy", 3, rpy, 0, NULL);
    return rc;
}

static int parse_link(uctx *c, const xmlNode *n, ulink *l)
{
    memset(l, 0, sizeof *l);
    l->line = line_of(n);
    l->node = n;
    l->parent_joint = -1;
    l->name = attr(n, "name");
    if (!l->name || !*l->name) return ufail(c, l->line, "<link> without a name");
    const xmlNode *in = child_elem(n, "inertial");
    if (!in) return MBS_OK;
    l->has_inertial = 1;
    double xyz[3], rpy[3], R[9];
    int rc = parse_origin(c, in, xyz, rpy);
    if (rc) return rc;
    const xmlNode *mn = child_elem(in, "mass");
    if (!mn) return ufail(c, line_of(in), "link %s: <inertial> without <mass>", l->name);
    if ((rc = parse_numbers(c, mn, "value", 1, &l->mass, 1, NULL))) return rc;
    if (l->mass < 0) return ufail(c, line_of(mn), "link %s: negative mass %g", l->name, l->mass);
    const xmlNode *inn = child_elem(in, "inertia");
    if (!inn) return ufail(c, line_of(in), "link %s: <inertial> without <inertia>", l->name);
    l->inertia_line = line_of(inn);
    static const char *const comp[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
    for (int k = 0; k < 6; k++)
        if ((rc = parse_numbers(c, inn, comp[k], 1, &l->I[k], 1, NULL))) return rc;
    /* An inertia whose radii of gyration are all below a micrometre is a
     * point mass written with round-off (icub_reduced: head ixz = 2.4e-35,
     * r_upper_leg iyy = 4.1e-18 kg m^2 with zeros elsewhere, not positive
     * semidefinite): taken as exactly zero. */
    {
        double big = 0;
        for (int k = 0; k < 6; k++)
            if (fabs(l->I[k]) > big) big = fabs(l->I[k]);
        if (big > 0 && big < 1e-12 * l->mass) {
            memset(l->I, 0, sizeof l->I);
            l->tiny = big;
        }
    }
    /* inertial frame -> link frame */
    rpy_matrix(rpy, R);
    rotate_inertia(l->I, R);
    memcpy(l->com, xyz, sizeof xyz);
    return MBS_OK;
}

static int parse_joint(uctx *c, const xmlNode *n, ujoint *j)
{
    memset(j, 0, sizeof *j);
    j->line = line_of(n);
    j->name = attr(n, "name");
    if (!j->name || !*j->name) return ufail(c, j->line, "<joint> without a name");
    const char *type = attr(n, "type");
    if (!type) return ufail(c, j->line, "joint %s: missing attribute \"type\"", j->name);
    j->type = -1;
    for (int k = 0; UJ_NAMES[k]; k++)
        if (strcmp(type, UJ_NAMES[k]) == 0) j->type = k;
    if (j->type < 0)
        return ufail(c, j->line,
                     "joint %s: unknown joint type \"%s\" (valid: revolute, continuous, prismatic, fixed, "
                     "floating, planar, spherical)", j->name, type);
    const xmlNode *pn = child_elem(n, "parent"), *cn = child_elem(n, "child");
    if (!pn || !attr(pn, "link")) return ufail(c, j->line, "joint %s: missing <parent link=\"...\"/>", j->name);
    if (!cn || !attr(cn, "link")) return ufail(c, j->line, "joint %s: missing <child link=\"...\"/>", j->name);
    const char *pname = attr(pn, "link"), *cname = attr(cn, "link");
    j->parent = find_link(c, pname);
    j->child = find_link(c, cname);
    if (j->parent < 0)
        return ufail(c, line_of(pn), "joint %s: parent link \"%s\" does not exist", j->name, pname);
    if (j->child < 0) return ufail(c, line_of(cn), "joint %s: child link \"%s\" does not exist", j->name, cname);
    if (j->parent == j->child)
        return ufail(c, j->line, "joint %s: parent and child are the same link (%s)", j->name, pname);
    int rc = parse_origin(c, n, j->xyz, j->rpy);
    if (rc) return rc;
    static const double xaxis[3] = { 1, 0, 0 };
    const xmlNode *an = child_elem(n, "axis");
    if (an && (rc = parse_numbers(c, an, "xyz", 3, j->axis, 0, xaxis))) return rc;
    if (!an) memcpy(j->axis, xaxis, sizeof xaxis);
    double na = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
    if (j->type != UJ_FIXED && j->type != UJ_FLOATING && j->type != UJ_SPHERICAL && !(na > 1e-12))
        return ufail(c, an ? line_of(an) : j->line, "joint %s: the axis is zero", j->name);
    if (na > 1e-12)
        for (int k = 0; k < 3; k++) j->axis[k] /= na;
    const xmlNode *ln = child_elem(n, "limit");
    j->lower = j->upper = j->effort = j->velocity = NAN;
    if (ln) {
        j->has_limit = 1;
        double *dst[4] = { &j->lower, &j->upper, &j->effort, &j->velocity };
        static const char *const names[4] = { "lower", "upper", "effort", "velocity" };
        for (int k = 0; k < 4; k++)
            if (attr(ln, names[k]) && (rc = parse_numbers(c, ln, names[k], 1, dst[k], 1, NULL))) return rc;
    }
    const xmlNode *dn = child_elem(n, "dynamics");
    j->damping = j->friction = NAN;
    if (dn) {
        j->has_dynamics = 1;
        if (attr(dn, "damping") && (rc = parse_numbers(c, dn, "damping", 1, &j->damping, 1, NULL))) return rc;
        if (attr(dn, "friction") && (rc = parse_numbers(c, dn, "friction", 1, &j->friction, 1, NULL))) return rc;
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- checks */

/* Physical checks of one link's inertial. */
static int check_link_inertia(uctx *c, ulink *l)
{
    if (!l->has_inertial) return MBS_OK;
    int zero = 1;
    for (int k = 0; k < 6; k++)
        if (l->I[k] != 0) zero = 0;
    if (zero) return MBS_OK;   /* point mass, or nothing */
    double lam[3];
    mbs_inertia_principal(l->I, lam);
    /* A link inertia must be positive semidefinite (round-off aside). A
     * singular one (dummy links of 1e-6 in every entry are common) is let
     * through to the triangle rule below; the body it ends up in must be
     * positive definite (checked by the builder). */
    if (!(lam[0] >= -1e-12 * fabs(lam[2])) || !(lam[2] > 0))
        return ufail(c, l->inertia_line, "link %s: inertia not positive definite: principal moments %g, %g, %g",
                     l->name, lam[0], lam[1], lam[2]);
    if (l->mass == 0)
        return ufail(c, l->inertia_line, "link %s: zero mass but a non-zero inertia", l->name);
    memcpy(l->Iraw, l->I, sizeof l->I);
    if (lam[0] + lam[1] < lam[2] * (1 - 1e-9)) {
        if (c->o->strict_inertia)
            return ufail(c, l->inertia_line,
                         "link %s: inertia violates the triangle inequality: principal moments %g, %g, %g "
                         "(%g + %g < %g)", l->name, lam[0], lam[1], lam[2], lam[0], lam[1], lam[2]);
        l->bad_triangle = 1;
        if (c->o->balance_inertia) {
            /* MuJoCo's balanceinertia: the principal moments are replaced by
             * their mean, i.e. the isotropic inertia of the same trace */
            double mean = (l->I[0] + l->I[1] + l->I[2]) / 3;
            for (int k = 0; k < 6; k++) l->I[k] = k < 3 ? mean : 0;
        }
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- building */

typedef struct {
    double mass, mc[3];    /* mass and first moment (group frame) */
    double J[9];           /* second moment about the group origin: sum of I_c + m (|c|^2 1 - c c^T) */
    int nmassive;          /* links with a positive mass */
    int bad_triangle;      /* a link's inertia violates the triangle inequality */
} composite;

static void composite_add(composite *g, const ulink *l)
{
    g->bad_triangle |= l->bad_triangle;
    if (!l->has_inertial) return;
    g->nmassive += l->mass > 0;
    double c[3], I[6], S[9];
    mvec(c, l->R, l->com);
    for (int k = 0; k < 3; k++) c[k] += l->p[k];
    memcpy(I, l->I, sizeof I);
    rotate_inertia(I, l->R);
    sym_from6(S, I);
    double m = l->mass, cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) g->J[3 * r + k] += S[3 * r + k] + m * ((r == k ? cc : 0) - c[r] * c[k]);
    g->mass += m;
    for (int k = 0; k < 3; k++) g->mc[k] += m * c[k];
}

/* mass, CoM and inertia about the CoM of a composite */
static void composite_result(const composite *g, double *mass, double com[3], double I[6])
{
    *mass = g->mass;
    double S[9];
    memcpy(S, g->J, sizeof S);
    if (g->mass > 0) {
        for (int k = 0; k < 3; k++) com[k] = g->mc[k] / g->mass;
        double cc = com[0] * com[0] + com[1] * com[1] + com[2] * com[2];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) S[3 * r + k] -= g->mass * ((r == k ? cc : 0) - com[r] * com[k]);
    } else {
        com[0] = com[1] = com[2] = 0;
    }
    sym_to6(I, S);
    /* a single link in its own frame: keep its numbers exactly */
}

static int add_frame_items(uctx *c, mbs_builder *b, const ulink *l, const char *where)
{
    int rc = mbs_builder_add_point(b, l->body, l->name, l->p, where, c->err);
    if (rc < 0) return rc;
    static const char *const suf[3] = { "_x", "_y", "_z" };
    for (int k = 0; k < 3; k++) {
        char name[512];
        double v[3] = { l->R[k], l->R[3 + k], l->R[6 + k] };
        snprintf(name, sizeof name, "%s%s", l->name, suf[k]);
        rc = mbs_builder_add_vector(b, l->body, name, v, where, c->err);
        if (rc < 0) return rc;
    }
    return MBS_OK;
}

/* The links parent before child (order, nl), in the order of repeated
 * passes over the links in file order that each take every link whose
 * parent link is taken already: after the root, a link is taken in pass 1 if
 * its parent is the root, else in its parent's pass if it comes after its
 * parent in the file, or in the next pass if before. Links out of reach of
 * the root (a loop of joints) are an error. */
static int link_order(uctx *c, int root, int *order)
{
    const int nl = c->nl;
    int *first = calloc((size_t)nl + 1, sizeof *first), *kids = calloc((size_t)nl + 1, sizeof *kids);
    int *pass = malloc((size_t)nl * sizeof *pass), *stack = malloc((size_t)nl * sizeof *stack);
    int rc = MBS_OK;
    if (!first || !kids || !pass || !stack) {
        rc = mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        goto done;
    }
    /* children lists (kids[first[l] .. first[l + 1] - 1]) */
    for (int k = 0; k < nl; k++)
        if (k != root) first[c->joint[c->link[k].parent_joint].parent + 1]++;
    for (int l = 0; l < nl; l++) first[l + 1] += first[l];
    for (int l = 0; l < nl; l++) pass[l] = first[l];
    for (int k = 0; k < nl; k++)
        if (k != root) kids[pass[c->joint[c->link[k].parent_joint].parent]++] = k;
    for (int l = 0; l < nl; l++) pass[l] = -1;
    int sp = 0;
    pass[root] = 0;
    stack[sp++] = root;
    while (sp > 0) {
        int l = stack[--sp];
        for (int e = first[l]; e < first[l + 1]; e++) {
            int k = kids[e];
            pass[k] = l == root ? 1 : pass[l] + (l > k);
            stack[sp++] = k;
        }
    }
    for (int k = 0; k < nl; k++)
        if (pass[k] < 0) {
            rc = ufail(c, c->link[k].line, "link %s is part of a loop of joints (not reachable from the root link %s)",
                       c->link[k].name, c->link[root].name);
            goto done;
        }
    /* by pass, then file position (counting sort; passes are < nl) */
    for (int p = 0; p <= nl; p++) first[p] = 0;
    for (int k = 0; k < nl; k++) first[pass[k] + 1]++;
    for (int p = 0; p < nl; p++) first[p + 1] += first[p];
    for (int k = 0; k < nl; k++) order[first[pass[k]]++] = k;
done:
    free(first);
    free(kids);
    free(pass);
    free(stack);
    return rc;
}

/* ---------------------------------------------------------------- visual geometry */

/* rgba of a <material>: its own <color>, else that of the robot-level
 * material of the same name; rgba[3] = -1 if none */
static void material_rgba(uctx *c, const xmlNode *mat, double rgba[4])
{
    rgba[0] = rgba[1] = rgba[2] = 0.7;
    rgba[3] = -1;
    if (!mat) return;
    const xmlNode *col = child_elem(mat, "color");
    const char *name = attr(mat, "name");
    for (const xmlNode *k = c->robot->children; !col && name && k; k = k->next)
        if (is_elem(k, "material") && attr(k, "name") && strcmp(attr(k, "name"), name) == 0)
            col = child_elem(k, "color");
    if (col && parse_numbers(c, col, "rgba", 4, rgba, 1, NULL) != MBS_OK) rgba[3] = -1;
}

/* one <visual> or <collision> element of link l into v; MBS_OK, or an
 * error (c->err) that the caller turns into a warning */
static int parse_visual(uctx *c, const ulink *l, const xmlNode *n, mbs_visual_info *v)
{
    double xyz[3], rpy[3], R[9], t[3];
    int rc = parse_origin(c, n, xyz, rpy);
    if (rc) return rc;
    const xmlNode *g = child_elem(n, "geometry"), *s = NULL;
    for (const xmlNode *k = g ? g->children : NULL; k && !s; k = k->next)
        if (k->type == XML_ELEMENT_NODE) s = k;
    if (!s) return ufail(c, line_of(n), "link %s: <%s> without a shape in <geometry>", l->name, (const char *)n->name);
    static const double one[3] = { 1, 1, 1 };
    if (is_elem(s, "box")) {
        v->shape = MBS_VISUAL_BOX;
        rc = parse_numbers(c, s, "size", 3, v->size, 1, NULL);
    } else if (is_elem(s, "cylinder")) {
        v->shape = MBS_VISUAL_CYLINDER;
        rc = parse_numbers(c, s, "radius", 1, &v->size[0], 1, NULL);
        if (!rc) rc = parse_numbers(c, s, "length", 1, &v->size[1], 1, NULL);
    } else if (is_elem(s, "sphere")) {
        v->shape = MBS_VISUAL_SPHERE;
        rc = parse_numbers(c, s, "radius", 1, &v->size[0], 1, NULL);
    } else if (is_elem(s, "mesh")) {
        v->shape = MBS_VISUAL_MESH;
        rc = parse_numbers(c, s, "scale", 3, v->size, 0, one);
        if (!rc && !attr(s, "filename"))
            rc = ufail(c, line_of(s), "link %s: <mesh> without a filename", l->name);
        if (!rc && !(v->mesh = mbs_strdup(attr(s, "filename"))))
            rc = mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
    } else {
        return ufail(c, line_of(s), "link %s: unknown shape <%s>", l->name, (const char *)s->name);
    }
    if (rc) return rc;
    for (int k = 0; k < 3 && v->shape != MBS_VISUAL_MESH; k++)   /* a negative mesh scale mirrors it */
        if (!(v->size[k] >= 0)) return ufail(c, line_of(s), "link %s: negative size of <%s>", l->name, (const char *)s->name);
    rpy_matrix(rpy, R);
    mmul(v->R, l->R, R);
    mvec(t, l->R, xyz);
    for (int k = 0; k < 3; k++) v->p[k] = l->p[k] + t[k];
    v->body = l->body;
    v->collision = is_elem(n, "collision");
    if (!v->collision) material_rgba(c, child_elem(n, "material"), v->rgba);
    else v->rgba[3] = -1;
    return (v->link = mbs_strdup(l->name)) ? MBS_OK : mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
}

/* The <visual> and <collision> shapes of every link, in the frame of the
 * body its group became. A malformed one is skipped with a warning: the
 * dynamics do not depend on it. */
static int add_visuals(uctx *c, mbs_model *m)
{
    int n = 0;
    for (int k = 0; k < c->nl; k++)
        for (const xmlNode *e = c->link[k].node->children; e; e = e->next)
            n += is_elem(e, "visual") || is_elem(e, "collision");
    if (n == 0) return MBS_OK;
    m->visual = calloc((size_t)n, sizeof *m->visual);
    if (!m->visual) return mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
    for (int k = 0; k < c->nl; k++)
        for (const xmlNode *e = c->link[k].node->children; e; e = e->next) {
            if (!is_elem(e, "visual") && !is_elem(e, "collision")) continue;
            mbs_visual_info *v = &m->visual[m->nvisual];
            mbs_error verr;
            mbs_error *keep = c->err;
            c->err = &verr;
            int rc = parse_visual(c, &c->link[k], e, v);
            c->err = keep;
            if (rc == MBS_ERR_NOMEM) return mbs_error_set(c->err, rc, "%s", verr.msg);
            if (rc == MBS_OK) {
                m->nvisual++;
                continue;
            }
            free(v->mesh);
            free(v->link);
            memset(v, 0, sizeof *v);
            if (c->o->warn) {
                char msg[MBS_ERROR_MSG_LEN + 40];
                snprintf(msg, sizeof msg, "%s (shape ignored)", verr.msg);
                c->o->warn(c->o->warn_user, msg);
            }
        }
    return MBS_OK;
}

/* The tree of links: each link's parent joint (duplicate joint names and
 * links with two parents rejected) and the one root link, in *root. */
static int link_tree(uctx *c, int *root)
{
    const int nl = c->nl, nj = c->nj;
    *root = -1;
    for (int k = 0; k < nj; k++) {
        ujoint *j = &c->joint[k];
        int i = mbs_hashmap_put(&c->joint_map, 0, j->name, k);
        if (i == -2) return mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        if (i >= 0) return ufail(c, j->line, "duplicate joint name \"%s\" (also line %d)", j->name, c->joint[i].line);
        ulink *ch = &c->link[j->child];
        if (ch->parent_joint >= 0)
            return ufail(c, j->line, "joint %s: link %s already has a parent joint (%s, line %d)", j->name, ch->name,
                         c->joint[ch->parent_joint].name, c->joint[ch->parent_joint].line);
        ch->parent_joint = k;
    }
    for (int k = 0; k < nl; k++)
        if (c->link[k].parent_joint < 0) {
            if (*root >= 0)
                return ufail(c, c->link[k].line, "link %s has no parent joint, nor has link %s (line %d): a URDF "
                             "has exactly one root link", c->link[k].name, c->link[*root].name, c->link[*root].line);
            *root = k;
        }
    if (*root < 0) return ufail(c, 0, "no root link (every link is a child of a joint: the joints form a loop)");
    return MBS_OK;
}

/* The rigid groups (a link and the links fixed to it) and each link's
 * placement in its group's frame, links in order (parent first). */
static void link_groups(uctx *c, const int *order)
{
    for (int t = 0; t < c->nl; t++) {
        ulink *l = &c->link[order[t]];
        if (l->parent_joint < 0 || c->joint[l->parent_joint].type != UJ_FIXED) {
            l->group = order[t];
            memset(l->R, 0, sizeof l->R);
            l->R[0] = l->R[4] = l->R[8] = 1;
            memset(l->p, 0, sizeof l->p);
        } else {
            const ujoint *j = &c->joint[l->parent_joint];
            const ulink *pl = &c->link[j->parent];
            double Rj[9], t3[3];
            rpy_matrix(j->rpy, Rj);
            l->group = pl->group;
            mmul(l->R, pl->R, Rj);
            mvec(t3, pl->R, j->xyz);
            for (int k = 0; k < 3; k++) l->p[k] = pl->p[k] + t3[k];
        }
    }
}

/* One body per rigid group (the root group is the ground unless the base
 * floats), with the group's composite inertia; then the named frames of
 * the links merged into a body. */
static int add_bodies(uctx *c, mbs_builder *b, composite *comp, const int *order, int root)
{
    const int nl = c->nl;
    for (int t = 0; t < nl; t++) composite_add(&comp[c->link[order[t]].group], &c->link[order[t]]);
    for (int t = 0; t < nl; t++) {
        ulink *l = &c->link[order[t]];
        if (l->group != order[t]) {
            l->body = c->link[l->group].body;
            continue;
        }
        if (order[t] == root && !c->o->floating_base) {
            l->body = 0;
            continue;
        }
        char where[1024];
        snprintf(where, sizeof where, "%s:%d", c->file, l->line);
        double mass, com[3], I[6];
        composite_result(&comp[order[t]], &mass, com, I);
        if (!(mass > 0)) {
            const ujoint *j = l->parent_joint >= 0 ? &c->joint[l->parent_joint] : NULL;
            if (j)
                return ufail(c, l->line, "link %s moves (joint %s, line %d) but has %s, and no link with mass is "
                             "fixed to it", l->name, j->name, j->line, l->has_inertial ? "zero mass" : "no <inertial>");
            return ufail(c, l->line, "link %s is the floating base but has %s, and no link with mass is fixed to it",
                         l->name, l->has_inertial ? "zero mass" : "no <inertial>");
        }
        /* exact numbers for a body that is a single link */
        int single = comp[order[t]].nmassive == (l->has_inertial && l->mass > 0);
        if (single && l->has_inertial) {
            memcpy(com, l->com, sizeof com);
            memcpy(I, l->I, sizeof I);
        }
        int rc = mbs_builder_add_body(b, l->name, mass, com, I, where, c->err);
        if (rc < 0) return rc;
        l->body = rc;
    }
    for (int t = 0; t < nl; t++) {
        const ulink *l = &c->link[order[t]];
        if (l->group == order[t]) continue;   /* a body's (or the ground's) own frame */
        char where[1024];
        snprintf(where, sizeof where, "%s:%d", c->file, l->line);
        int rc = add_frame_items(c, b, l, where);
        if (rc != MBS_OK) return rc;
    }
    return MBS_OK;
}

/* The joint of URDF joint j (not fixed) between the bodies of its links:
 * its type, a placement point on the parent at the joint origin, and the
 * axis and reference in both frames. */
static int add_joint(uctx *c, mbs_builder *b, const ujoint *j, const ulink *ch)
{
    const ulink *pl = &c->link[j->parent];
    char where[1024];
    snprintf(where, sizeof where, "%s:%d", c->file, j->line);
    double Rj[9], Rp[9], pp[3], a[3], r[3];
    rpy_matrix(j->rpy, Rj);
    mmul(Rp, pl->R, Rj);
    mvec(pp, pl->R, j->xyz);
    for (int k = 0; k < 3; k++) pp[k] += pl->p[k];
    mbs_joint_type type;
    switch (j->type) {
    case UJ_REVOLUTE:
    case UJ_CONTINUOUS: type = MBS_JOINT_REVOLUTE; break;
    case UJ_PRISMATIC: type = MBS_JOINT_PRISMATIC; break;
    case UJ_PLANAR: type = MBS_JOINT_PLANAR; break;
    case UJ_SPHERICAL: type = MBS_JOINT_SPHERICAL; break;
    default: type = MBS_JOINT_FLOATING; break;
    }
    if (type == MBS_JOINT_FLOATING || type == MBS_JOINT_SPHERICAL) {
        a[0] = 1; a[1] = 0; a[2] = 0;
        r[0] = 0; r[1] = 1; r[2] = 0;
    } else {
        memcpy(a, j->axis, sizeof a);
        ref_for_axis(a, r);
    }
    int pp_h = mbs_builder_add_point(b, pl->body, NULL, pp, where, c->err);
    if (pp_h < 0) return pp_h;
    mbs_joint_side ps, cs;
    memset(&ps, 0, sizeof ps);
    memset(&cs, 0, sizeof cs);
    ps.point = pp_h;
    mvec(ps.axis, Rp, a);
    mvec(ps.ref, Rp, r);
    ps.has_ref = 1;
    cs.point = -1;
    memcpy(cs.axis, a, sizeof a);
    memcpy(cs.ref, r, sizeof r);
    cs.has_ref = 1;
    int rc = mbs_builder_add_joint(b, j->name, type, pl->body, ch->body, &ps, &cs, NULL, 0, NULL, 0, where, c->err);
    if (rc >= 0 && (type == MBS_JOINT_FLOATING || type == MBS_JOINT_SPHERICAL))
        rc = mbs_builder_set_joint_velocities(b, rc, (int)c->o->velocities, where, c->err);
    return rc < 0 ? rc : MBS_OK;
}

/* The joints: the floating base's, then one per joint that is not fixed,
 * links in order. */
static int add_joints(uctx *c, mbs_builder *b, const int *order, int root)
{
    if (c->o->floating_base) {
        mbs_joint_side ps = { -1, { 1, 0, 0 }, { 0, 1, 0 }, 1 }, cs = ps;
        char where[1024];
        snprintf(where, sizeof where, "%s:%d", c->file, c->link[root].line);
        int rc = mbs_builder_add_joint(b, "root_joint", MBS_JOINT_FLOATING, 0, c->link[root].body, &ps, &cs, NULL, 0,
                                       NULL, 0, where, c->err);
        if (rc >= 0) rc = mbs_builder_set_joint_velocities(b, rc, (int)c->o->velocities, where, c->err);
        if (rc < 0) return rc;
    }
    for (int t = 0; t < c->nl; t++) {
        const ulink *ch = &c->link[order[t]];
        if (ch->parent_joint < 0) continue;
        const ujoint *j = &c->joint[ch->parent_joint];
        if (j->type == UJ_FIXED) continue;
        int rc = add_joint(c, b, j, ch);
        if (rc != MBS_OK) return rc;
    }
    return MBS_OK;
}

/* The joints' limits and dynamics (model data, not used in the dynamics). */
static void joint_data(const uctx *c, mbs_model *m)
{
    for (int i = 1; i <= m->nb; i++) {
        mbs_joint_info *ji = &m->joint[i];
        ji->lower = ji->upper = ji->effort = ji->velocity = ji->damping = ji->friction = NAN;
        int k = mbs_hashmap_get(&c->joint_map, 0, ji->name);
        if (k >= 0) {
            const ujoint *j = &c->joint[k];
            ji->has_limit = j->has_limit;
            ji->lower = j->lower;
            ji->upper = j->upper;
            ji->effort = j->effort;
            ji->velocity = j->velocity;
            ji->has_dynamics = j->has_dynamics;
            ji->damping = j->damping;
            ji->friction = j->friction;
        }
    }
}

/* Warnings: links with lenient inertias, then composites that violate the
 * triangle inequality without a link that does. */
static void inertia_warnings(uctx *c, const mbs_model *m, const composite *comp, const int *order)
{
    for (int t = 0; t < c->nl; t++) {
        const ulink *l = &c->link[order[t]];
        if (l->tiny > 0)
            uwarn(c, l->inertia_line,
                  "link %s: inertia negligible (largest entry %g kg m^2, radius of gyration below 1 um): "
                  "taken as a point mass", l->name, l->tiny);
        if (!l->bad_triangle) continue;
        double lam[3];
        mbs_inertia_principal(l->Iraw, lam);
        uwarn(c, l->inertia_line,
              "link %s: inertia violates the triangle inequality: principal moments %g, %g, %g (%g + %g < %g); "
              "%s", l->name, lam[0], lam[1], lam[2], lam[0], lam[1], lam[2],
              c->o->balance_inertia ? "balanced (each principal moment replaced by their mean)" : "accepted");
    }
    for (int i = 1; i <= m->nb; i++) {
        int head = find_link(c, m->body[i].name);
        if (head < 0 || comp[head].bad_triangle) continue;
        double lam[3];
        mbs_inertia_principal(m->x + m->body[i].x_inertia, lam);
        if (lam[0] + lam[1] < lam[2] * (1 - 1e-9))
            uwarn(c, c->link[head].line,
                  "body %s (link %s with the links fixed to it): inertia violates the triangle inequality: "
                  "principal moments %g, %g, %g; accepted", m->body[i].name, c->link[head].name, lam[0], lam[1],
                  lam[2]);
    }
}

static mbs_model *build(uctx *c, const char *robot_name)
{
    const int nl = c->nl;
    int root;
    if (link_tree(c, &root) != MBS_OK) return NULL;
    /* order links parent before child; detect loops (links unreachable from the root) */
    int *order = malloc((size_t)nl * sizeof *order);
    if (!order) {
        mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        return NULL;
    }
    if (link_order(c, root, order) != MBS_OK) {
        free(order);
        return NULL;
    }
    link_groups(c, order);
    for (int k = 0; k < nl; k++)
        if (check_link_inertia(c, &c->link[k]) != MBS_OK) {
            free(order);
            return NULL;
        }

    mbs_builder *b = mbs_builder_new(robot_name, c->file);
    composite *comp = calloc((size_t)nl, sizeof *comp);
    mbs_model *m = NULL;
    if (!b || !comp) {
        mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        goto done;
    }
    mbs_builder_set_inertia_policy(b, !c->o->strict_inertia, NULL, NULL);
    if (add_bodies(c, b, comp, order, root) != MBS_OK || add_joints(c, b, order, root) != MBS_OK) goto done;
    m = mbs_builder_finish(b, c->err);
    if (!m) goto done;
    joint_data(c, m);
    if (add_visuals(c, m) != MBS_OK) {
        mbs_model_free(m);
        m = NULL;
        goto done;
    }
    inertia_warnings(c, m, comp, order);
done:
    free(order);
    free(comp);
    mbs_builder_free(b);
    return m;
}

/* ---------------------------------------------------------------- entry point */

/* The first XML error (libxml2 goes on and reports follow-up errors, e.g.
 * "premature end of data", whose line is less useful). */
typedef struct { int have, line, col; char msg[512]; } first_error;

static void on_xml_error(void *user, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt = user;
    first_error *fe = ctxt ? ctxt->_private : NULL;
    if (!fe || fe->have || !e || e->level < XML_ERR_ERROR) return;
    fe->have = 1;
    fe->line = e->line;
    fe->col = e->int2;   /* the column, for parser errors */
    snprintf(fe->msg, sizeof fe->msg, "%s", e->message ? e->message : "not well-formed");
    size_t len = strlen(fe->msg);
    while (len > 0 && (fe->msg[len - 1] == '\n' || fe->msg[len - 1] == ' ')) fe->msg[--len] = '\0';
}

/* Attribute values are read as the text they hold: a value with an entity
 * reference (name="arm&e;1": a text, the reference, a text) is refused
 * rather than read in part. (Character references and the predefined
 * entities are text already.) */
static int check_attributes(uctx *c, const xmlNode *n)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        for (const xmlAttr *a = n->properties; a; a = a->next) {
            const xmlNode *v = a->children;
            if (!v || (v->type == XML_TEXT_NODE && !v->next)) continue;
            while (v && v->type == XML_TEXT_NODE) v = v->next;
            return ufail(c, line_of(n), "<%s %s=\"...\">: the value holds the entity reference &%s;, which is "
                         "not supported in attribute values: write its text out", (const char *)n->name,
                         (const char *)a->name, v && v->name ? (const char *)v->name : "?");
        }
        if (check_attributes(c, n->children)) return MBS_ERR_MODEL;
    }
    return MBS_OK;
}

static once_flag xml_once = ONCE_FLAG_INIT;
static void xml_init(void) { xmlInitParser(); }

/* The XML document of the file `path` (text NULL) or of text, or NULL
 * with the first error in err. */
static xmlDocPtr read_xml(const char *path, const char *text, mbs_error *err)
{
    FILE *f = NULL;
    size_t len = 0;
    if (text) {
        len = strlen(text);
        if (len > INT_MAX) {
            mbs_error_set(err, MBS_ERR_ARG, "%s: the text is longer than %d bytes", path, INT_MAX);
            return NULL;
        }
    } else if (!(f = mbs_model_file_open(path, err))) {   /* (a directory is refused there) */
        return NULL;
    }
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        if (f) fclose(f);
        mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    /* every error goes to our handler, the parser's and those libxml2 raises
     * without a parser (input/output): nothing is printed, the first one is
     * kept. The handler of this thread is restored afterwards. */
    first_error fe;
    memset(&fe, 0, sizeof fe);
    ctxt->_private = &fe;
    ctxt->sax->serror = on_xml_error;
    xmlStructuredErrorFunc old_handler = xmlStructuredError;
    void *old_handler_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(ctxt, on_xml_error);
    const int xopt = XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOWARNING;
    xmlDocPtr doc = text ? xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL, xopt)
                         : xmlCtxtReadFd(ctxt, fileno(f), path, NULL, xopt);
    xmlSetStructuredErrorFunc(old_handler_ctx, old_handler);
    if (f) fclose(f);
    if (!doc || fe.have) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        if (fe.have) {
            mbs_error_set(err, MBS_ERR_PARSE, "%s:%d:%d: XML error: %s", path, fe.line, fe.col, fe.msg);
        } else if (e && e->message) {
            first_error le;
            memset(&le, 0, sizeof le);
            le.line = e->line;
            snprintf(le.msg, sizeof le.msg, "%s", e->message);
            size_t len = strlen(le.msg);
            while (len > 0 && (le.msg[len - 1] == '\n' || le.msg[len - 1] == ' ')) le.msg[--len] = '\0';
            mbs_error_set(err, MBS_ERR_PARSE, "%s:%d:%d: XML error: %s", path, le.line, e->int2, le.msg);
        } else {
            mbs_error_set(err, MBS_ERR_PARSE, "%s: not a well-formed XML document", path);
        }
        xmlFreeDoc(doc);
        xmlFreeParserCtxt(ctxt);
        return NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return doc;
}

/* The <link> and <joint> elements of <robot> into c->link and c->joint,
 * with the link names in c->link_map: 0, or -1 with the error set. */
static int read_links_joints(uctx *c, xmlNode *root)
{
    for (xmlNode *k = root->children; k; k = k->next) {
        if (is_elem(k, "link")) c->nl++;
        if (is_elem(k, "joint")) c->nj++;
    }
    if (c->nl == 0) {
        ufail(c, line_of(root), "<robot> has no <link>");
        return -1;
    }
    c->link = calloc((size_t)c->nl, sizeof *c->link);
    c->joint = calloc((size_t)c->nj + 1, sizeof *c->joint);
    if (!c->link || !c->joint) {
        mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        return -1;
    }
    int il = 0, ij = 0;
    for (xmlNode *k = root->children; k; k = k->next)
        if (is_elem(k, "link")) {
            if (parse_link(c, k, &c->link[il])) return -1;
            int i = mbs_hashmap_put(&c->link_map, 0, c->link[il].name, il);
            if (i == -2) {
                mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
                return -1;
            }
            if (i >= 0) {
                ufail(c, c->link[il].line, "duplicate link name \"%s\" (also line %d)", c->link[il].name,
                      c->link[i].line);
                return -1;
            }
            il++;
        }
    for (xmlNode *k = root->children; k; k = k->next)
        if (is_elem(k, "joint") && parse_joint(c, k, &c->joint[ij++])) return -1;
    return 0;
}

/* The URDF document in the file `path` (text NULL) or in text (path: its
 * name in messages). */
static mbs_model *load_urdf(const char *path, const char *text, const mbs_urdf_options *opts, mbs_error *err)
{
    static const mbs_urdf_options defaults = { 0, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
    call_once(&xml_once, xml_init);
    uctx c;
    memset(&c, 0, sizeof c);
    c.file = path;
    c.err = err;
    c.o = opts ? opts : &defaults;
    if (c.o->velocities != MBS_VELOCITIES_EULER_RATES && c.o->velocities != MBS_VELOCITIES_TANGENT) {
        mbs_error_set(err, MBS_ERR_ARG, "%s: mbs_urdf_options.velocities: %d is not a velocity convention (0: Euler "
                      "rates, 1: tangent)", path, (int)c.o->velocities);
        return NULL;
    }
    xmlDocPtr doc = read_xml(path, text, err);
    if (!doc) return NULL;

    mbs_model *m = NULL;
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !is_elem(root, "robot")) {
        ufail(&c, root ? line_of(root) : 0, "the root element must be <robot>, got <%s>",
              root ? (const char *)root->name : "");
        goto out;
    }
    c.robot = root;
    if (check_attributes(&c, root)) goto out;
    if (read_links_joints(&c, root)) goto out;
    {
        const char *rname = attr(root, "name");
        char defname[256];
        if (!rname || !*rname) {
            const char *base = strrchr(path, '/');
            snprintf(defname, sizeof defname, "%s", base ? base + 1 : path);
            char *dot = strrchr(defname, '.');
            if (dot && dot != defname) *dot = '\0';
            rname = defname;
        }
        m = build(&c, rname);
    }
out:
    mbs_hashmap_free(&c.link_map);
    mbs_hashmap_free(&c.joint_map);
    free(c.link);
    free(c.joint);
    xmlFreeDoc(doc);
    return m;
}

mbs_model *mbs_model_load_urdf(const char *path, const mbs_urdf_options *opts, mbs_error *err)
{
    if (!path) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_load_urdf: path is NULL");
        return NULL;
    }
    return load_urdf(path, NULL, opts, err);
}

mbs_model *mbs_model_load_urdf_string(const char *xml, const char *name, const mbs_urdf_options *opts,
                                      mbs_error *err)
{
    if (!xml) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_load_urdf_string: xml is NULL");
        return NULL;
    }
    return load_urdf(name ? name : "<string>", xml, opts, err);
}
