/*
 * objective_model.c - the model's objectives: their count, names and
 * look-up by name (mbsens/sensitivity.h).
 */
#include <string.h>

#include "mbsens/sensitivity.h"
#include "model_impl.h"

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
