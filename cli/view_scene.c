/*
 * view_scene.c - what the page of `mbsens view` draws of a model, in body
 * coordinates (view_page.h):
 *   - URDF models: the visual shapes (box, cylinder, sphere; meshes whose
 *     file is found, embedded as they are; a missing mesh is replaced by the
 *     link's collision primitive, else the body is drawn as its equivalent
 *     inertia box), and the joints;
 *   - JSON models: a figure: each body as rods from its joint point to its
 *     named points, its centre of mass and its children's joints; joints as
 *     markers oriented along their axes; named points and centres of mass
 *     as small spheres; wheels of contact and tire elements as rings;
 *   - for both: spring-dampers as lines, contact planes, the loops' cut
 *     joints.
 * Rods and markers scale with the model size (the largest distance of a
 * joint point, named point or centre of mass from its body origin).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "view_page.h"

#define ENDS_MAX 256

typedef struct scene_ctx {
    const mbs_model *m;
    cli_buf *b;
    view_scene *sc;
    double r;              /* rod radius */
    double *plocal;        /* named points, body-local (3 each) */
    int nshapes;
    const double *ends[ENDS_MAX];   /* rod ends drawn on the current body */
    int nends;
} scene_ctx;

/* ---------------------------------------------------------------- JSON pieces */

void view_str(cli_buf *b, const char *s)
{
    cli_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') cli_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') cli_buf_printf(b, "\\u%04x", (unsigned)*p);
        else cli_buf_printf(b, "%c", *p);
    }
    cli_buf_puts(b, "\"");
}

void view_vec(cli_buf *b, const double *x, int n)
{
    cli_buf_puts(b, "[");
    for (int k = 0; k < n; k++) cli_buf_printf(b, k ? ",%.9g" : "%.9g", isfinite(x[k]) ? x[k] : 0.0);
    cli_buf_puts(b, "]");
}

void view_base64(cli_buf *b, const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    char chunk[4097];
    size_t len = 0;
    cli_buf_puts(b, "\"");
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        chunk[len++] = tab[v >> 18 & 63];
        chunk[len++] = tab[v >> 12 & 63];
        chunk[len++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        chunk[len++] = i + 2 < n ? tab[v & 63] : '=';
        if (len >= sizeof chunk - 5) {
            chunk[len] = '\0';
            cli_buf_puts(b, chunk);
            len = 0;
        }
    }
    chunk[len] = '\0';
    cli_buf_puts(b, chunk);
    cli_buf_puts(b, "\"");
}

/* ---------------------------------------------------------------- shapes */

static void note(view_scene *sc, const char *fmt, const char *a, const char *c)
{
    char msg[2048];
    snprintf(msg, sizeof msg, fmt, a, c);
    char **nn = realloc(sc->notes, sizeof *nn * (size_t)(sc->nnotes + 1));
    if (!nn) return;
    sc->notes = nn;
    size_t len = strlen(msg) + 1;
    if ((sc->notes[sc->nnotes] = malloc(len))) memcpy(sc->notes[sc->nnotes++], msg, len);
}

/* opens a shape object: {"body": b, "kind": "...", "label": "..." */
static void shape(scene_ctx *c, int body, const char *kind, const char *label)
{
    cli_buf_puts(c->b, c->nshapes++ ? ",\n  {\"body\": " : "\n  {\"body\": ");
    cli_buf_printf(c->b, "%d, \"kind\": \"%s\", \"label\": ", body, kind);
    view_str(c->b, label);
    c->sc->drawn[body] = 1;
}

static void member(cli_buf *b, const char *name, const double *x, int n)
{
    cli_buf_printf(b, ", \"%s\": ", name);
    view_vec(b, x, n);
}

static double norm3(const double *a) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static void col(const double X[9], int k, double c[3])
{
    c[0] = X[k];
    c[1] = X[3 + k];
    c[2] = X[6 + k];
}

/* a rod of body `body` from a to e, unless short or already drawn to e */
static void rod(scene_ctx *c, int body, const double *a, const double *e)
{
    double d[3] = { e[0] - a[0], e[1] - a[1], e[2] - a[2] };
    if (norm3(d) < 1.5 * c->r) return;
    for (int k = 0; k < c->nends; k++)
        if (!memcmp(c->ends[k], e, 3 * sizeof *e)) return;
    if (c->nends < ENDS_MAX) c->ends[c->nends++] = e;
    shape(c, body, "rod", mbs_body_name(c->m, body));
    member(c->b, "a", a, 3);
    member(c->b, "b", e, 3);
    cli_buf_puts(c->b, "}");
}

/* the marker of joint j, on its child body where that body is drawn, else
 * on its parent (the joint point and axis are fixed in both), else none:
 * bodies with nothing else to draw (massless frames between the axes of
 * a multi-axis joint) are not stored in the page */
static void joint_marker(scene_ctx *c, int j)
{
    const mbs_model *m = c->m;
    const int child = c->sc->drawn[j], parent = mbs_body_parent(m, j);
    if (!child && !c->sc->drawn[parent]) return;
    double P[3], X[9], ax[3], ax2[3];
    if (child) mbs_joint_frames(m, j, NULL, NULL, P, X);
    else mbs_joint_frames(m, j, P, X, NULL, NULL);
    mbs_joint_type t = mbs_joint_type_of(m, j);
    char label[600];
    snprintf(label, sizeof label, "joint %s (%s)", mbs_joint_name(m, j), mbs_joint_type_name(t));
    shape(c, child ? j : parent, "joint", label);
    cli_buf_printf(c->b, ", \"jtype\": \"%s\"", mbs_joint_type_name(t));
    member(c->b, "p", P, 3);
    col(X, 0, ax);
    member(c->b, "axis", ax, 3);
    if (t == MBS_JOINT_CARDAN) {
        col(X, 1, ax2);
        member(c->b, "axis2", ax2, 3);
    }
    cli_buf_puts(c->b, "}");
}

static void sphere_at(scene_ctx *c, int body, const char *kind, const char *label, const double *p)
{
    shape(c, body, kind, label);
    member(c->b, "p", p, 3);
    cli_buf_puts(c->b, "}");
}

/* ---------------------------------------------------------------- URDF shapes */

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* the file a URDF mesh name refers to: package://PKG/REST in an ancestor
 * of the model's directory (named PKG, or holding PKG/) or in
 * $ROS_PACKAGE_PATH; file://PATH; a path relative to the model file */
static int resolve_mesh(const char *model_path, const char *name, char *out, size_t len)
{
    char dir[4096];
    const char *slash = model_path ? strrchr(model_path, '/') : NULL;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - model_path) : 1, slash ? model_path : ".");
    if (!strncmp(name, "file://", 7)) {
        snprintf(out, len, "%s", name + 7);
        return file_exists(out);
    }
    if (strncmp(name, "package://", 10) != 0) {
        snprintf(out, len, name[0] == '/' ? "%s" : "%s/%s", name[0] == '/' ? name : dir, name);
        return file_exists(out);
    }
    const char *pkg = name + 10, *rest = strchr(pkg, '/');
    if (!rest) return 0;
    int plen = (int)(rest - pkg);
    for (char *end = dir + strlen(dir);; end = strrchr(dir, '/')) {
        if (end) *end = '\0';
        const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
        if ((int)strlen(base) == plen && !strncmp(base, pkg, (size_t)plen)) {
            snprintf(out, len, "%s%s", dir, rest);
            if (file_exists(out)) return 1;
        }
        snprintf(out, len, "%s/%.*s%s", dir, plen, pkg, rest);
        if (file_exists(out)) return 1;
        if (!strchr(dir, '/')) break;
    }
    const char *rpp = getenv("ROS_PACKAGE_PATH");
    for (const char *p = rpp; p && *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%.*s%s", (int)n, p, plen, pkg, rest);
        if (file_exists(out)) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

static const char *mesh_format(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return NULL;
    static const char *const fmts[] = { "stl", "obj", "dae" };
    for (int k = 0; k < 3; k++) {
        int same = strlen(dot + 1) == 3;
        for (int i = 0; same && i < 3; i++) same = (dot[1 + i] | 0x20) == fmts[k][i];
        if (same) return fmts[k];
    }
    return NULL;
}

/* the bytes of a file into the page as {"format", "data"}; 0 or -1 */
static int embed_mesh(cli_buf *b, const char *path, const char *fmt)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *data = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            char *nd = realloc(data, cap = cap ? 2 * cap : 65536);
            if (!nd) break;
            data = nd;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int ok = !ferror(f) && data;
    fclose(f);
    if (ok) {
        cli_buf_printf(b, ", \"mesh\": {\"format\": \"%s\", \"data\": ", fmt);
        view_base64(b, data, n);
        cli_buf_puts(b, "}");
    }
    free(data);
    return ok ? 0 : -1;
}

static const char *const SHAPE_KIND[] = { "box", "cylinder", "sphere", "mesh" };

static void visual_shape(scene_ctx *c, const mbs_visual *v, const char *mesh_path)
{
    char label[600];
    snprintf(label, sizeof label, "%s (link %s)", mbs_body_name(c->m, v->body), v->link);
    shape(c, v->body, SHAPE_KIND[v->shape], label);
    member(c->b, "size", v->size, 3);
    member(c->b, "R", v->R, 9);
    member(c->b, "p", v->p, 3);
    if (v->rgba[3] >= 0) member(c->b, "color", v->rgba, 4);
    if (mesh_path) embed_mesh(c->b, mesh_path, mesh_format(mesh_path));
    cli_buf_puts(c->b, "}");
}

/* the box of uniform density with the body's mass and inertia */
static void inertia_box(scene_ctx *c, int body)
{
    double com[3], I[6], lam[3], V[9], size[3];
    const double mass = mbs_body_mass(c->m, body);
    mbs_body_inertia(c->m, body, com, I);
    mbs_inertia_principal_axes(I, lam, V);
    for (int k = 0; k < 3; k++) {
        double s = lam[(k + 1) % 3] + lam[(k + 2) % 3] - lam[k];
        size[k] = mass > 0 && s > 0 ? sqrt(6 * s / mass) : 2 * c->r;
        size[k] = fmax(size[k], 2 * c->r);
    }
    char label[600];
    snprintf(label, sizeof label, "%s (inertia box, %.4g kg)", mbs_body_name(c->m, body), mass);
    shape(c, body, "box", label);
    member(c->b, "size", size, 3);
    member(c->b, "R", V, 9);
    member(c->b, "p", com, 3);
    cli_buf_puts(c->b, "}");
}

/* does link `link` have a primitive collision shape (index in the model's
 * list, or -1)? */
static int collision_primitive(const mbs_model *m, const char *link)
{
    mbs_visual v;
    for (int k = 0; k < mbs_model_nvisuals(m); k++)
        if (mbs_model_visual(m, k, &v) == MBS_OK && v.collision && v.shape != MBS_VISUAL_MESH &&
            !strcmp(v.link, link))
            return k;
    return -1;
}

/* the URDF shapes of every body; bodies left without one get their inertia box */
static void urdf_shapes(scene_ctx *c)
{
    const mbs_model *m = c->m;
    const char *src = mbs_model_source(m);
    mbs_visual v, w;
    int *has = calloc((size_t)c->sc->nb + 1, sizeof *has);
    for (int k = 0; k < mbs_model_nvisuals(m); k++) {
        if (mbs_model_visual(m, k, &v) != MBS_OK || v.collision) continue;
        char path[4096];
        if (v.shape != MBS_VISUAL_MESH) {
            visual_shape(c, &v, NULL);
        } else if (resolve_mesh(src, v.mesh, path, sizeof path) && mesh_format(path)) {
            visual_shape(c, &v, path);
        } else {
            int alt = collision_primitive(m, v.link);
            note(c->sc, "mesh %s not found%s", v.mesh, alt >= 0 ? ": drawn as its link's collision shape"
                                                                  : ": drawn as the body's inertia box");
            if (alt < 0 || mbs_model_visual(m, alt, &w) != MBS_OK) continue;
            visual_shape(c, &w, NULL);
        }
        if (has) has[v.body] = 1;
    }
    for (int i = 1; i <= c->sc->nb; i++)
        if (has && !has[i] && mbs_body_mass(m, i) > 0) inertia_box(c, i);
    free(has);
}

/* ---------------------------------------------------------------- the figure */

/* the figure of body i (JSON models): rods to its points, CoM and children */
static void figure(scene_ctx *c, int i)
{
    const mbs_model *m = c->m;
    double P[3], com[3], I[6], Pp[ENDS_MAX][3];
    int npp = 0;
    mbs_joint_frames(m, i, NULL, NULL, P, NULL);
    c->nends = 0;
    for (int k = i + 1; k <= c->sc->nb && npp < ENDS_MAX; k++)
        if (mbs_body_parent(m, k) == i) {
            mbs_joint_frames(m, k, Pp[npp], NULL, NULL, NULL);
            rod(c, i, P, Pp[npp++]);
        }
    for (int k = 0; k < mbs_model_npoints(m); k++)
        if (mbs_point_body(m, k) == i) rod(c, i, P, c->plocal + 3 * k);
    if (mbs_body_mass(m, i) > 0) {
        mbs_body_inertia(m, i, com, I);
        rod(c, i, P, com);
        char label[600];
        snprintf(label, sizeof label, "%s: centre of mass (%.4g kg)", mbs_body_name(m, i), mbs_body_mass(m, i));
        sphere_at(c, i, "com", label, com);
    }
}

static void point_markers(scene_ctx *c)
{
    for (int k = 0; k < mbs_model_npoints(c->m); k++)
        sphere_at(c, mbs_point_body(c->m, k), "point", mbs_point_name(c->m, k), c->plocal + 3 * k);
}

/* joints of the ground, cut joints, wheels */
static void attachments(scene_ctx *c)
{
    const mbs_model *m = c->m;
    double P[3];
    char label[600];
    for (int j = 1; j <= c->sc->nb; j++)
        if (mbs_body_parent(m, j) == 0) {
            mbs_joint_frames(m, j, P, NULL, NULL, NULL);
            snprintf(label, sizeof label, "joint %s on the ground", mbs_joint_name(m, j));
            sphere_at(c, 0, "point", label, P);
        }
    for (int k = 0; k < mbs_model_ncuts(m); k++) {
        double P0[3], X0[9], P1[3], X1[9];
        mbs_cut_frames(m, k, P0, X0, P1, X1);
        snprintf(label, sizeof label, "cut joint %s (%s, closes a loop)", mbs_cut_name(m, k),
                 mbs_joint_type_name(mbs_cut_type(m, k)));
        sphere_at(c, mbs_cut_body(m, k, 0), "point", label, P0);
        sphere_at(c, mbs_cut_body(m, k, 1), "point", label, P1);
    }
    for (int k = 0; k < mbs_model_nforces(m); k++) {
        mbs_force_geometry g;
        if (mbs_force_geometry_of(m, k, &g) != MBS_OK || !(g.radius > 0) || g.body[0] < 0) continue;
        snprintf(label, sizeof label, "%s %s", mbs_force_type_name(mbs_force_type_of(m, k)), mbs_force_name(m, k));
        double size[3] = { g.radius, 0, 0 };
        if (norm3(g.axis) > 0) {
            shape(c, g.body[0], "ring", label);
            member(c->b, "axis", g.axis, 3);
        } else {
            shape(c, g.body[0], "contact", label);
        }
        member(c->b, "size", size, 3);
        member(c->b, "p", g.point[0], 3);
        cli_buf_puts(c->b, "}");
    }
}

static void springs_and_planes(scene_ctx *c)
{
    const mbs_model *m = c->m;
    int n = 0;
    cli_buf_puts(c->b, "\"springs\": [");
    for (int k = 0; k < mbs_model_nforces(m); k++) {
        mbs_force_geometry g;
        if (mbs_force_type_of(m, k) != MBS_FORCE_SPRING_DAMPER || mbs_force_geometry_of(m, k, &g) != MBS_OK) continue;
        cli_buf_puts(c->b, n++ ? ",\n  {\"name\": " : "\n  {\"name\": ");
        view_str(c->b, mbs_force_name(m, k));
        cli_buf_printf(c->b, ", \"b\": [%d, %d], \"p\": [", g.body[0], g.body[1]);
        view_vec(c->b, g.point[0], 3);
        cli_buf_puts(c->b, ",");
        view_vec(c->b, g.point[1], 3);
        cli_buf_puts(c->b, "]}");
        c->sc->drawn[g.body[0]] = c->sc->drawn[g.body[1]] = 1;
    }
    cli_buf_puts(c->b, "],\n\"planes\": [");
    n = 0;
    for (int k = 0; k < mbs_model_nforces(m); k++) {
        mbs_force_geometry g;
        if (mbs_force_geometry_of(m, k, &g) != MBS_OK || !(g.radius > 0)) continue;
        cli_buf_puts(c->b, n++ ? ", {\"p\": " : "{\"p\": ");
        view_vec(c->b, g.plane_point, 3);
        cli_buf_puts(c->b, ", \"n\": ");
        view_vec(c->b, g.plane_normal, 3);
        cli_buf_puts(c->b, "}");
    }
    cli_buf_puts(c->b, "],\n");
}

/* ---------------------------------------------------------------- the scene */

static double model_size(const scene_ctx *c)
{
    const mbs_model *m = c->m;
    double s = 0, P[3], com[3], I[6];
    for (int k = 0; k < mbs_model_npoints(m); k++) s = fmax(s, norm3(c->plocal + 3 * k));
    for (int i = 1; i <= c->sc->nb; i++) {
        mbs_joint_frames(m, i, P, NULL, NULL, NULL);
        mbs_body_inertia(m, i, com, I);
        s = fmax(s, fmax(norm3(P), norm3(com)));
    }
    return s > 0 ? s : 1;
}

static void bodies_list(scene_ctx *c)
{
    const mbs_model *m = c->m;
    cli_buf_puts(c->b, "\"bodies\": [");
    for (int i = 0; i <= c->sc->nb; i++) {
        cli_buf_puts(c->b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        view_str(c->b, mbs_body_name(m, i));
        cli_buf_printf(c->b, ", \"parent\": %d, \"drawn\": %s}", i ? mbs_body_parent(m, i) : -1,
                       c->sc->drawn[i] ? "true" : "false");
    }
    cli_buf_puts(c->b, "],\n\"points\": [");
    for (int k = 0; k < mbs_model_npoints(m); k++) {
        cli_buf_puts(c->b, k ? ",\n  {\"name\": " : "\n  {\"name\": ");
        view_str(c->b, mbs_point_name(m, k));
        cli_buf_printf(c->b, ", \"body\": %d, \"p\": ", mbs_point_body(m, k));
        view_vec(c->b, c->plocal + 3 * k, 3);
        cli_buf_puts(c->b, "}");
    }
    cli_buf_puts(c->b, "],\n");
}

int view_scene_write(const char *cmd, const mbs_model *m, mbs_data *d, view_scene *sc, cli_buf *b)
{
    memset(sc, 0, sizeof *sc);
    sc->nb = mbs_model_nbodies(m);
    sc->drawn = calloc((size_t)sc->nb + 1, sizeof *sc->drawn);
    scene_ctx c = { m, b, sc, 0, calloc(3 * (size_t)mbs_model_npoints(m) + 3, sizeof(double)), 0, { 0 }, 0 };
    if (!sc->drawn || !c.plocal) {
        free(c.plocal);
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < mbs_model_npoints(m); k++) {   /* body-local: A^T (r - o) */
        double r[3], A[9], o[3];
        mbs_point_kinematics(m, d, k, r, NULL, NULL);
        mbs_body_pose(d, mbs_point_body(m, k), A, o);
        for (int i = 0; i < 3; i++)
            c.plocal[3 * k + i] = A[i] * (r[0] - o[0]) + A[3 + i] * (r[1] - o[1]) + A[6 + i] * (r[2] - o[2]);
    }
    sc->size = model_size(&c);
    c.r = 0.02 * sc->size;
    sc->drawn[0] = 1;
    const int nb = sc->nb;
    cli_buf_printf(b, "\"size\": %.9g,\n\"radius\": %.9g,\n\"shapes\": [", sc->size, c.r);
    if (mbs_model_nvisuals(m) > 0) {
        urdf_shapes(&c);
    } else {
        for (int i = 1; i <= nb; i++) figure(&c, i);
        point_markers(&c);
    }
    attachments(&c);
    for (int j = 1; j <= nb; j++) joint_marker(&c, j);
    cli_buf_puts(b, "],\n");
    springs_and_planes(&c);
    bodies_list(&c);
    free(c.plocal);
    return CLI_EXIT_OK;
}

void view_scene_free(view_scene *sc)
{
    for (int k = 0; k < sc->nnotes; k++) free(sc->notes[k]);
    free(sc->notes);
    free(sc->drawn);
    memset(sc, 0, sizeof *sc);
}
