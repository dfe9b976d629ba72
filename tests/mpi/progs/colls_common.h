/*
 * colls_common.h: what colls.c and colls_reduce.c share: the communicator under test,
 * the contribution pattern, the counts and roots tried. Include after harness.h.
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
static int *ints(size_t n)
{
    int *p = malloc((n + 1) * sizeof(int));
    for (size_t i = 0; i <= n; i++)
        p[i] = SENT;
    return p;
}
static void rep(const char *what)
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

#endif
