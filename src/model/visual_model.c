/*
 * visual_model.c - the visual and collision geometry a model keeps from a
 * URDF file (src/io/load_urdf.c fills it): lifetime, the accessors of
 * mbsens/model.h, and its MJCF form (src/io/write_mjcf.c).
 */
#include <stdlib.h>
#include <string.h>

#include "mbsens/kinematics.h"
#include "model/model_impl.h"
#include "model/model_util.h"

void mbs_visuals_free(mbs_model *m)
{
    for (int k = 0; k < m->nvisual; k++) {
        free(m->visual[k].mesh);
        free(m->visual[k].link);
    }
    free(m->visual);
    m->visual = NULL;
    m->nvisual = 0;
}

int mbs_visuals_copy(mbs_model *dst, const mbs_model *src)
{
    dst->visual = NULL;
    dst->nvisual = 0;
    if (src->nvisual == 0) return 0;
    dst->visual = calloc((size_t)src->nvisual, sizeof *dst->visual);
    if (!dst->visual) return -1;
    dst->nvisual = src->nvisual;
    for (int k = 0; k < src->nvisual; k++) {
        dst->visual[k] = src->visual[k];
        dst->visual[k].mesh = mbs_strdup(src->visual[k].mesh);
        dst->visual[k].link = mbs_strdup(src->visual[k].link);
        if ((src->visual[k].mesh && !dst->visual[k].mesh) || (src->visual[k].link && !dst->visual[k].link))
            return -1;
    }
    return 0;
}

int mbs_model_nvisuals(const mbs_model *m) { return m ? m->nvisual : 0; }

int mbs_model_visual(const mbs_model *m, int k, mbs_visual *v)
{
    if (!m || !v || k < 0 || k >= m->nvisual) return MBS_ERR_ARG;
    const mbs_visual_info *s = &m->visual[k];
    v->body = s->body;
    v->shape = s->shape;
    memcpy(v->size, s->size, sizeof v->size);
    memcpy(v->R, s->R, sizeof v->R);
    memcpy(v->p, s->p, sizeof v->p);
    memcpy(v->rgba, s->rgba, sizeof v->rgba);
    v->collision = s->collision;
    v->mesh = s->mesh;
    v->link = s->link;
    return MBS_OK;
}

/* does link `link` have a <visual> element? */
static int link_has_visual(const mbs_model *m, const char *link)
{
    for (int k = 0; k < m->nvisual; k++)
        if (!m->visual[k].collision && strcmp(m->visual[k].link, link) == 0) return 1;
    return 0;
}

int mbs_visual_geoms_mjcf(const mbs_model *m, int b, FILE *f, int indent)
{
    int n = 0;
    for (int k = 0; k < m->nvisual; k++) {
        const mbs_visual_info *v = &m->visual[k];
        if (v->body != b || v->shape == MBS_VISUAL_MESH) continue;
        if (v->collision && link_has_visual(m, v->link)) continue;
        double q[4];
        mbs_rotation_quaternion(v->R, q);
        fprintf(f, "%*s<geom", indent, "");
        switch (v->shape) {
        case MBS_VISUAL_BOX:
            fprintf(f, " type=\"box\" size=\"%.17g %.17g %.17g\"", 0.5 * v->size[0], 0.5 * v->size[1],
                    0.5 * v->size[2]);
            break;
        case MBS_VISUAL_CYLINDER:
            fprintf(f, " type=\"cylinder\" size=\"%.17g %.17g\"", v->size[0], 0.5 * v->size[1]);
            break;
        default: fprintf(f, " type=\"sphere\" size=\"%.17g\"", v->size[0]); break;
        }
        fprintf(f, " pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\" contype=\"0\" conaffinity=\"0\"",
                v->p[0], v->p[1], v->p[2], q[0], q[1], q[2], q[3]);
        if (v->rgba[3] >= 0)
            fprintf(f, " rgba=\"%.6g %.6g %.6g %.6g\"", v->rgba[0], v->rgba[1], v->rgba[2], v->rgba[3]);
        fprintf(f, "/>\n");
        n++;
    }
    return n;
}
