/*
 * finish_topology.c - the spanning tree of a builder's joints: which joint
 * is each body's parent joint, and which are cut to open closed loops
 * (builder_impl.h: mbs_builder_topology).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_impl.h"

/* Cut priority (thesis §3.5, Ch. 6.1): joints are cut spherical first,
 * then joints with more coordinates, ties broken by the later joint in the
 * input. A key that sorts joints in that order, descending. */
static uint64_t cut_key(const b_joint *j, int k)
{
    uint64_t sph = j->type == MBS_JOINT_SPHERICAL, nq = (uint64_t)mbs_joint_type_nq(j->type);
    return sph << 40 | nq << 32 | (uint64_t)(unsigned)k;
}

static int cmp_key_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/* Bodies reachable from the ground through joints not cut (parent to
 * child), into reached[] (nb + 1); returns how many moving bodies. The
 * joints leaving body h are out[first[h] .. first[h + 1] - 1]. */
static int reach(const mbs_builder *b, const int *cut, const int *first, const int *out, int *reached, int *stack)
{
    const int nb = b->nb;
    for (int i = 0; i <= nb; i++) reached[i] = 0;
    reached[0] = 1;
    int sp = 0, n = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        int h = stack[--sp];
        for (int e = first[h]; e < first[h + 1]; e++) {
            const b_joint *j = &b->joint[out[e]];
            if (cut[out[e]] || reached[j->child]) continue;
            reached[j->child] = 1;
            n++;
            stack[sp++] = j->child;
        }
    }
    return n;
}

/* Scratch of mbs_builder_topology (nb + 2 entries per body, nj + 1 per joint). */
typedef struct topo {
    int *first, *out;      /* the joints leaving body h: out[first[h] .. first[h + 1] - 1] */
    int *ifirst, *in;      /* the joints entering body h: in[ifirst[h] .. ifirst[h + 1] - 1] */
    int *indeg;            /* joints not cut entering each body */
    int *mark, *stack;     /* searches: mark holds the stamp of the last search that visited a body */
    int *order;            /* the joints in cut priority order (cut first first) */
    int *rank;             /* per joint: its position in order */
    int *tjoint;           /* a spanning tree of the joints not cut: each body's tree joint (-1: ground) */
    int *heap;             /* joints, the largest rank on top (tree_build) */
} topo;

static int topo_alloc(topo *t, int nb, int nj)
{
    size_t n2 = (size_t)nb + 2, nj1 = (size_t)nj + 1;
    int **body[] = { &t->first, &t->ifirst, &t->indeg, &t->mark, &t->stack, &t->tjoint };
    int **joint[] = { &t->out, &t->in, &t->order, &t->rank, &t->heap };
    int fail = 0;
    for (size_t k = 0; k < sizeof body / sizeof body[0]; k++) fail |= !(*body[k] = calloc(n2, sizeof(int)));
    for (size_t k = 0; k < sizeof joint / sizeof joint[0]; k++) fail |= !(*joint[k] = calloc(nj1, sizeof(int)));
    return fail ? -1 : 0;
}

static void topo_free(topo *t)
{
    int *all[] = { t->first, t->out, t->ifirst, t->in, t->indeg, t->mark, t->stack, t->order, t->rank, t->tjoint,
                   t->heap };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
}

/* Whether, with every body reachable from the ground through the joints
 * not cut, body c = child of joint k stays reachable once k is cut too (then
 * every body does): a search from c backwards along the joints not cut,
 * other than k, that reaches the ground. stamp is new for each search. */
static int reachable_without(const mbs_builder *b, const int *cut, int k, topo *t, int stamp)
{
    int sp = 0, c = b->joint[k].child;
    t->mark[c] = stamp;
    t->stack[sp++] = c;
    while (sp > 0) {
        int h = t->stack[--sp];
        for (int e = t->ifirst[h]; e < t->ifirst[h + 1]; e++) {
            int j = t->in[e];
            if (j == k || cut[j]) continue;
            int p = b->joint[j].parent;
            if (p == 0) return 1;
            if (t->mark[p] == stamp) continue;
            t->mark[p] = stamp;
            t->stack[sp++] = p;
        }
    }
    return 0;
}

/* The heap of tree_build: joints ordered by rank, the largest on top. */
static void heap_push(topo *t, int *n, int k)
{
    int i = (*n)++;
    while (i > 0 && t->rank[t->heap[(i - 1) / 2]] < t->rank[k]) {
        t->heap[i] = t->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->heap[i] = k;
}

static int heap_pop(topo *t, int *n)
{
    int top = t->heap[0], last = t->heap[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && t->rank[t->heap[c + 1]] > t->rank[t->heap[c]]) c++;
        if (t->rank[t->heap[c]] <= t->rank[last]) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (*n > 0) t->heap[i] = last;
    return top;
}

/* A spanning tree of the joints not cut (t->tjoint), grown from the ground
 * by taking each time, among the joints from the tree to a body not in it,
 * the one last in the cut priority: the joints the cut choice tends to
 * keep, so that most joints it cuts are not in the tree. Every body must
 * be reachable. */
static void tree_build(const mbs_builder *b, const int *cut, topo *t)
{
    int n = 0;
    for (int i = 0; i <= b->nb; i++) t->tjoint[i] = -2;
    t->tjoint[0] = -1;
    for (int h = 0;;) {
        for (int e = t->first[h]; e < t->first[h + 1]; e++)
            if (!cut[t->out[e]]) heap_push(t, &n, t->out[e]);
        h = -1;
        while (n > 0 && h < 0) {
            int k = heap_pop(t, &n);
            if (t->tjoint[b->joint[k].child] != -2) continue;
            h = b->joint[k].child;
            t->tjoint[h] = k;
        }
        if (h < 0) break;
    }
}

/* Joint lists by body: the joints of body h (as parent when by_parent, else
 * as child) are list[first[h] .. first[h + 1] - 1], in input order. first
 * has nb + 2 entries, list nj, fill nb + 1 (scratch). */
static void joint_lists(const mbs_builder *b, int by_parent, int *first, int *list, int *fill)
{
    for (int h = 0; h <= b->nb + 1; h++) first[h] = 0;
    for (int k = 0; k < b->nj; k++) first[(by_parent ? b->joint[k].parent : b->joint[k].child) + 1]++;
    for (int h = 0; h <= b->nb; h++) first[h + 1] += first[h];
    for (int h = 0; h <= b->nb; h++) fill[h] = 0;
    for (int k = 0; k < b->nj; k++) {
        int h = by_parent ? b->joint[k].parent : b->joint[k].child;
        list[first[h] + fill[h]++] = k;
    }
}

/* The message for the first body not reachable from the ground. */
static int disconnected(const mbs_builder *b, const int *reached, const topo *t, mbs_error *err)
{
    for (int i = 1; i <= b->nb; i++) {
        if (reached[i]) continue;
        /* the user's cuts may be what separates it */
        int via = -1;
        for (int e = t->ifirst[i]; e < t->ifirst[i + 1] && via < 0; e++)
            if (b->joint[t->in[e]].cut) via = t->in[e];
        if (via >= 0)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: body %s is not connected to the ground once joint %s is cut (\"cut\": "
                                 "true): cut another joint of the loop", b->body[i].where, b->body[i].name,
                                 b->joint[via].name);
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: body %s is not connected to the ground (add a joint, e.g. floating)",
                             b->body[i].where, b->body[i].name);
    }
    return MBS_OK;
}

/* The joints in cut priority order, and their ranks. 0, or -1 if memory
 * runs out. */
static int priority_order(const mbs_builder *b, topo *t)
{
    uint64_t *key = malloc(((size_t)b->nj + 1) * sizeof *key);
    if (!key) return -1;
    for (int k = 0; k < b->nj; k++) key[k] = cut_key(&b->joint[k], k);
    qsort(key, (size_t)b->nj, sizeof *key, cmp_key_desc);
    for (int s = 0; s < b->nj; s++) {
        t->order[s] = (int)(key[s] & 0xffffffffu);
        t->rank[t->order[s]] = s;
    }
    free(key);
    return 0;
}

/* Topology: the spanning tree. Every body keeps one parent joint (pj, joint
 * index per body handle, pj[0] = -1) among the joints whose child it is;
 * every other joint is cut (cut[k] = 1): one per independent loop. Joints
 * marked by the user are cut first; then, while some body is the child of
 * several joints, the joint first in the cut priority among those whose
 * cut leaves every body connected to the ground is cut.
 *
 * Cutting only removes joints, so a joint that cannot be cut (its child has
 * a single joint left, or its cut would disconnect a body) never becomes
 * cuttable later: the rule above is one pass over the joints in priority
 * order, cutting each one that can be cut when its turn comes. A joint
 * outside a spanning tree of the joints not cut can be cut (the tree still
 * reaches every body); only a tree joint needs a search, and its cut a new
 * tree. */
int mbs_builder_topology(const mbs_builder *b, int *pj, int *cut, mbs_error *err)
{
    const int nb = b->nb, nj = b->nj;
    for (int i = 0; i <= nb; i++) pj[i] = -1;
    for (int k = 0; k < nj; k++) cut[k] = b->joint[k].cut ? 1 : 0;
    topo t;
    memset(&t, 0, sizeof t);
    int rc = MBS_OK;
    if (topo_alloc(&t, nb, nj) != 0 || priority_order(b, &t) != 0) {
        rc = oom(err);
        goto done;
    }
    joint_lists(b, 1, t.first, t.out, t.indeg);
    joint_lists(b, 0, t.ifirst, t.in, t.indeg);
    if (reach(b, cut, t.first, t.out, t.mark, t.stack) != nb) {
        rc = disconnected(b, t.mark, &t, err);
        goto done;
    }
    for (int i = 0; i <= nb; i++) {
        t.indeg[i] = 0;
        t.mark[i] = -1;
    }
    for (int k = 0; k < nj; k++)
        if (!cut[k]) t.indeg[b->joint[k].child]++;
    tree_build(b, cut, &t);
    for (int s = 0; s < nj; s++) {
        int k = t.order[s], c = b->joint[k].child;
        if (cut[k] || t.indeg[c] < 2) continue;
        int in_tree = t.tjoint[c] == k;
        if (in_tree && !reachable_without(b, cut, k, &t, s)) continue;
        cut[k] = 1;
        t.indeg[c]--;
        if (in_tree) tree_build(b, cut, &t);
    }
    for (int k = 0; k < nj; k++)
        if (!cut[k]) pj[b->joint[k].child] = k;
done:
    topo_free(&t);
    return rc;
}
