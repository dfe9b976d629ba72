/*
 * wio_group.c: groups (PROTOCOL.md 5, spec section 6) and the instance queries. Creation
 * is local: every process knows every PB's size, evaluates the filters (or reads the rank
 * lists) for every process, and numbers the members as PB blocks in order[] order. No
 * packet is exchanged.
 *
 * Choices where the published API is silent (spec 14):
 *  - order[pb]: PBs are ranked by ascending order[] value; equal values (0 included) keep
 *    PB id order. Only the first npb entries are read.
 *  - A NULL filter (or NULL rank list) excludes the whole PB.
 *  - Inside a PB's block, members are numbered by ascending MPI rank (the position among
 *    the PB's selected processes), so group ranks are 0..size-1 without holes.
 *  - waitio_create_group_wranks: each list ends with a negative entry (-1); ranks outside
 *    the PB or listed twice make the call fail (NULL).
 *  - A process that is not a member gets NULL, as does a group with no member.
 */
#include "wio_core.h"
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

/* The process's instance, set by the platform's waitio_init (NULL before and after). */
struct wio_core *wio_this;

/* Any context: FNV-1a over v's 4 little-endian bytes. */
static uint64_t fnv32(uint64_t h, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        h ^= (uint8_t)(v >> (8 * i));
        h *= FNV_PRIME;
    }
    return h;
}

/* Task context: the PBs in group order (ascending order[], ties by PB id) into pbs[]. */
static void pb_order(const struct wio_core *c, const int *order, uint32_t *pbs)
{
    for (uint32_t i = 0; i < c->npb; i++) {
        uint32_t j = i;
        for (; j > 0 && order[pbs[j - 1]] > order[i]; j--)
            pbs[j] = pbs[j - 1];
        pbs[j] = i;
    }
}

/* Task context: a group of the `n` members (universe indices in group rank order, owned by
 * the caller, copied), or NULL if we are not one of them or out of memory. */
static struct PBGroup *group_make(struct wio_core *c, int gid, const uint32_t *m, uint32_t n)
{
    int rank = -1;
    for (uint32_t i = 0; i < n; i++)
        if (m[i] == c->self)
            rank = (int)i;
    if (rank < 0)
        return NULL;
    struct PBGroup *g = wio_plat_alloc(sizeof *g);
    uint32_t *members = wio_plat_alloc(sizeof *members * n);
    if (!g || !members) {
        wio_plat_free(g);
        wio_plat_free(members);
        return NULL;
    }
    memcpy(members, m, sizeof *members * n);
    uint32_t before = 0; /* groups with the same gid and members created before */
    for (struct PBGroup *o = c->groups; o; o = o->next)
        if (o->gid == gid && o->size == (int)n && !memcmp(o->members, m, sizeof *m * n))
            before++;
    uint64_t h = fnv32(FNV_OFFSET, (uint32_t)gid);
    h = fnv32(h, n);
    for (uint32_t i = 0; i < n; i++)
        h = fnv32(h, m[i]);
    g->key = fnv32(h, before);
    g->magic = WIO_GROUP_MAGIC;
    g->gid = gid;
    g->core = c;
    g->size = (int)n;
    g->rank = rank;
    g->members = members;
    unsigned long tok = wio_plat_lock(c);
    g->next = c->groups;
    c->groups = g;
    wio_plat_unlock(c, tok);
    return g;
}

/* Task context: the group selected by filters (func[pb](pb, rank) == 1) on instance c. */
struct PBGroup *wio_group_filter(struct wio_core *c, int gid, waitio_filter_func_t func[],
                                 int order[])
{
    if (!c || !func || !order)
        return NULL;
    uint32_t *pbs = wio_plat_alloc(sizeof *pbs * c->npb);
    uint32_t *m = wio_plat_alloc(sizeof *m * c->nprocs);
    struct PBGroup *g = NULL;
    if (pbs && m) {
        uint32_t n = 0;
        pb_order(c, order, pbs);
        for (uint32_t i = 0; i < c->npb; i++) {
            uint32_t pb = pbs[i];
            for (uint32_t r = 0; func[pb] && r < c->pb_size[pb]; r++)
                if (func[pb]((int)pb, (int)r) == 1)
                    m[n++] = c->pb_base[pb] + r;
        }
        g = group_make(c, gid, m, n);
    }
    wio_plat_free(pbs);
    wio_plat_free(m);
    return g;
}

/* Task context: the group of the listed MPI ranks (rankap[pb], ending with a negative
 * entry; NULL: none of that PB) on instance c. */
struct PBGroup *wio_group_ranks(struct wio_core *c, int gid, int *rankap[], int order[])
{
    if (!c || !rankap || !order)
        return NULL;
    uint32_t *pbs = wio_plat_alloc(sizeof *pbs * c->npb);
    uint32_t *m = wio_plat_alloc(sizeof *m * c->nprocs);
    uint8_t *sel = wio_plat_alloc(c->nprocs);
    struct PBGroup *g = NULL;
    int bad = !pbs || !m || !sel;
    for (uint32_t pb = 0; !bad && pb < c->npb; pb++)
        for (int i = 0; rankap[pb] && rankap[pb][i] >= 0 && !bad; i++) {
            uint32_t r = (uint32_t)rankap[pb][i];
            if (r >= c->pb_size[pb] || sel[c->pb_base[pb] + r])
                bad = 1; /* outside the PB, or twice */
            else
                sel[c->pb_base[pb] + r] = 1;
        }
    if (!bad) {
        uint32_t n = 0;
        pb_order(c, order, pbs);
        for (uint32_t i = 0; i < c->npb; i++)
            for (uint32_t r = 0; r < c->pb_size[pbs[i]]; r++)
                if (sel[c->pb_base[pbs[i]] + r])
                    m[n++] = c->pb_base[pbs[i]] + r;
        g = group_make(c, gid, m, n);
    }
    wio_plat_free(pbs);
    wio_plat_free(m);
    wio_plat_free(sel);
    return g;
}

/* Task context, after waitio_init. */
waitio_group_t waitio_create_group(int gid, waitio_filter_func_t func[], int order[])
{
    return wio_group_filter(wio_this, gid, func, order);
}

/* Task context, after waitio_init. */
waitio_group_t waitio_create_group_wranks(int gid, int *rankap[], int order[])
{
    return wio_group_ranks(wio_this, gid, rankap, order);
}

/* Task context. */
int waitio_group_rank(waitio_group_t g, int *rank)
{
    if (!g || g->magic != WIO_GROUP_MAGIC || !rank)
        return -1;
    *rank = g->rank;
    return 0;
}

/* Task context. */
int waitio_group_size(waitio_group_t g, int *size)
{
    if (!g || g->magic != WIO_GROUP_MAGIC || !size)
        return -1;
    *size = g->size;
    return 0;
}

/* Task context, after waitio_init: the number of PBs; ary[pb] = its process count. */
int waitio_get_nprocs(int ary[])
{
    if (!wio_this)
        return -1;
    for (uint32_t i = 0; ary && i < wio_this->npb; i++)
        ary[i] = (int)wio_this->pb_size[i];
    return (int)wio_this->npb;
}

/* Task context, after waitio_init. */
int waitio_pb_size(int *npb)
{
    if (!wio_this || !npb)
        return -1;
    *npb = (int)wio_this->npb;
    return 0;
}

/* Task context, after waitio_init. */
int waitio_pb_rank(int *pbid)
{
    if (!wio_this || !pbid)
        return -1;
    *pbid = (int)wio_this->pbid;
    return 0;
}
