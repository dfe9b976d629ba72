/*
 * colls_common.h: what the collective programs (colls*.c, icolls*.c) share: the
 * communicator under test, the contribution pattern, the counts and roots tried, the
 * layouts of the v-variants and a non-commutative reduction. Include after harness.h.
 * Functions not every program uses are static inline (no unused-function warning).
 */
#ifndef COLLS_COMMON_H
#define COLLS_COMMON_H

static MPI_Comm C;     /* the communicator under test (MPI_COMM_NULL: not a member) */
static int R, S;       /* rank and size in C */
static const char *CN; /* its name in the check lines */
#define SENT (-777777) /* receive buffers are filled with it: must stay where no data goes */
#define BIGN 100000

/* Contribution j of rank r to a collective with `salt` (negative values included). */
static int v(int r, int j, int salt)
{
    return (r * 7919 + j * 31 + salt * 101) % 65536 - 1000;
}
static inline int *ints(size_t n)
{
    int *p = malloc((n + 1) * sizeof(int));
    for (size_t i = 0; i <= n; i++)
        p[i] = SENT;
    return p;
}
static inline void rep(const char *what)
{
    char name[200];
    snprintf(name, sizeof name, "%s [%s]", what, CN);
    report(name);
}
/* The counts tried: 0, 1, 7, 1000 with every root; BIGN with the first and last root. */
static const int counts[5] = {0, 1, 7, 1000, BIGN};
#define FOR_COUNTS_ROOTS(n, root)                                                                  \
    for (int k_ = 0, n = 0; k_ < 5; k_++)                                                          \
        for (int root = 0; root < S && (n = counts[k_], 1); root++)                                \
            if (k_ < 4 || root == 0 || root == S - 1)

/* The v-variants' layout: rank r has c(r) = 0 (r % 3 == 1) or n + r elements, placed in
 * reverse rank order with a gap of 2 after each block (the gaps must stay untouched).
 * Returns the length of the whole buffer. */
static inline int vcount(int r, int n)
{
    return r % 3 == 1 ? 0 : n + r;
}
static inline int vlayout(int n, int *cnt, int *dis)
{
    int off = 0;
    for (int r = S - 1; r >= 0; r--)
        cnt[r] = vcount(r, n), dis[r] = off, off += cnt[r] + 2;
    return off;
}

/* Alltoallv's layout on rank R: c(s, d) = ((s + d) % 4 + base) * m elements go from s to d
 * (the same both ways, so MPI_IN_PLACE can use it; zeros included unless base > 0), blocks
 * in reverse rank order with a gap of 1 after each send block and of 3 after each receive
 * block. Sets *slen to the send buffer's length and returns the receive buffer's. */
static inline int a2avlayout(int m, int base, int *sc, int *sd, int *rc, int *rd, int *slen)
{
    int so = 0, ro = 0;
    for (int d = S - 1; d >= 0; d--) {
        sc[d] = rc[d] = ((R + d) % 4 + base) * m;
        sd[d] = so, so += sc[d] + 1;
        rd[d] = ro, ro += rc[d] + 3;
    }
    *slen = so;
    return ro;
}

/* A non-commutative reduction: 2x2 matrices of unsigned (wrapping) multiplied, inout = in
 * x inout, so the result is M(0) x M(1) x ... x M(S-1) in rank order. Its datatype is
 * contiguous(4, MPI_UNSIGNED). */
static inline void matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}
static inline void mat(int r, int j, unsigned *m) /* [[r*3+j+2, 1], [1, 0]]: no two commute */
{
    m[0] = (unsigned)(r * 3 + j + 2), m[1] = 1, m[2] = 1, m[3] = 0;
}
/* The product of the matrices of ranks lo..hi-1 for element j (identity if empty). */
static inline void prod(int lo, int hi, int j, unsigned *p)
{
    unsigned id[4] = {1, 0, 0, 1}, m[4];
    memcpy(p, id, sizeof id);
    for (int r = hi - 1; r >= lo; r--) { /* p = M(r) x p, from the right end */
        int one = 1;
        mat(r, j, m);
        matmul(m, p, &one, NULL);
    }
}

/* The whole program: `checks` on MPI_COMM_WORLD, then on all ranks but the last (odd
 * when the world is even, and placed unlike the world: the last node has fewer). */
static inline int run_world_and_sub(int *argc, char ***argv, const char *prog, void (*checks)(void))
{
    if (!start(argc, argv, prog))
        return 1;
    char name[40];
    C = MPI_COMM_WORLD, R = me, S = np;
    snprintf(name, sizeof name, "world of %d", np);
    CN = name;
    checks();
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me == np - 1 ? MPI_UNDEFINED : 0, me, &sub);
    C = sub, R = -1, S = np - 1;
    if (sub != MPI_COMM_NULL)
        MPI_Comm_rank(sub, &R), MPI_Comm_size(sub, &S);
    snprintf(name, sizeof name, "ranks 0..%d", np - 2);
    checks();
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    return finish(prog);
}

#endif
