/*
 * objective_model.c - the model's objectives: their count, names and
 * look-up by name (mbsens/sensitivity.h), copy and free.
 */
#include <stdlib.h>
#include <string.h>

#include "mbsens/sensitivity.h"
#include "model/objective_model.h"
#include "model/model_impl.h"
#include "model/model_util.h"

int mbs_model_nobjectives(const mbs_model *m) { return m->nobj; }
const char *mbs_objective_name(const mbs_model *m, int k)
{
    return k >= 0 && k < m->nobj ? m->obj[k].name : NULL;
}
int mbs_objective_find(const mbs_model *m, const char *name)
{
    for (int k = 0; name && k < m->nobj; k++)
        if (!strcmp(m->obj[k].name, name)) return k;
    return -1;
}

void mbs_objectives_free(mbs_model *m)
{
    for (int k = 0; k < m->nobj && m->obj; k++) {
        free(m->obj[k].name);
        free(m->obj[k].where);
        free(m->obj[k].term);
    }
    free(m->obj);
    m->obj = NULL;
    m->nobj = 0;
}

int mbs_objectives_copy(mbs_model *dst, const mbs_model *src)
{
    dst->obj = NULL;
    dst->nobj = 0;
    if (src->nobj == 0) return 0;
    dst->obj = calloc((size_t)src->nobj, sizeof *dst->obj);
    if (!dst->obj) return -1;
    dst->nobj = src->nobj;
    for (int k = 0; k < src->nobj; k++) {
        const mbs_objective_info *s = &src->obj[k];
        mbs_objective_info *d = &dst->obj[k];
        *d = *s;
        d->name = mbs_strdup(s->name);
        d->where = mbs_strdup(s->where);
        d->term = malloc(sizeof *d->term * (size_t)s->nterm);
        if (!d->name || !d->where || !d->term) return -1;
        memcpy(d->term, s->term, sizeof *d->term * (size_t)s->nterm);
    }
    return 0;
}
