/*
 * icolls_common.h: what icolls.c and icolls_inplace.c share: the communicators every check
 * runs on, and the loop that runs one kind of collective on all of them. Include after
 * coll_call.h.
 */
#ifndef ICOLLS_COMMON_H
#define ICOLLS_COMMON_H

/* The configurations, made once: 0 is MPI_COMM_WORLD; 1 the world in reverse order (split
 * with key -rank); 1 + s, for s = 1 .. np-1, splits the world into ranks 0..s-1 (in order)
 * and s..np-1 (in reverse order). So every size from 1 to np appears, in both orders, and
 * each rank is in one communicator of each configuration. */
static int nconf;
static int how_next; /* the way of completion of the next call: ranks start at their number,
                        so the ranks of one call complete it in different ways */
static MPI_Comm *confs;
static char (*cnames)[40];

static void confs_make(void)
{
    nconf = np + 1, how_next = me;
    confs = malloc(nconf * sizeof *confs);
    cnames = malloc(nconf * sizeof *cnames);
    confs[0] = MPI_COMM_WORLD;
    snprintf(cnames[0], sizeof cnames[0], "world");
    MPI_Comm_split(MPI_COMM_WORLD, 0, -me, &confs[1]);
    snprintf(cnames[1], sizeof cnames[1], "world reversed");
    for (int s = 1; s < np; s++) {
        int lo = me < s;
        MPI_Comm_split(MPI_COMM_WORLD, lo, lo ? me : -me, &confs[1 + s]);
        if (lo)
            snprintf(cnames[1 + s], sizeof cnames[0], "ranks 0..%d", s - 1);
        else
            snprintf(cnames[1 + s], sizeof cnames[0], "ranks %d..%d", np - 1, s);
    }
}
static void conf_use(int k)
{
    C = confs[k], CN = cnames[k];
    MPI_Comm_rank(C, &R);
    MPI_Comm_size(C, &S);
}
static void confs_free(void)
{
    for (int k = 1; k < nconf; k++)
        MPI_Comm_free(&confs[k]);
    free(confs), free(cnames);
}

/* One kind on every configuration: every root, counts 0, 1, 7, 1000 (per block for the
 * blocked kinds) and on the world also BIGN (divided among the blocks) with the first and
 * last root; `flags` as call_init's. One check line. */
static inline void run_kind(int kind, int flags) /* inline: pcolls.c has its own */
{
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        int ncounts = kind == K_BARRIER ? 1 : k == 0 ? 5 : 4;
        for (int ci = 0; ci < ncounts; ci++)
            for (int root = 0; root < (rooted(kind) ? S : 1); root++) {
                if (ci == 4 && root != 0 && root != S - 1)
                    continue;
                int n = ci == 4 && blocked(kind) ? BIGN / S : counts[ci];
                call_run(kind, root, n, k * 31 + ci * 7 + root, flags, how_next++);
            }
    }
    char name[200], cnt[64] = "";
    if (kind != K_BARRIER)
        snprintf(cnt, sizeof cnt, ", counts 0..1000 and %d on the world", BIGN);
    snprintf(name, sizeof name,
             "%s%s: communicators of sizes 1..%d in both orders%s%s, %d ways of completion",
             mpi_name(kind, flags & CALL_NB), flags & CALL_IP ? " with MPI_IN_PLACE" : "", np,
             rooted(kind) ? ", every root" : "", cnt, NHOW);
    report(name);
}

#endif
