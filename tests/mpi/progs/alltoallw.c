/*
 * alltoallw.c: MPI conformance of MPI_Alltoallw: blocks of a different count per pair,
 * zero-sized blocks, a derived send type (a strided vector) received as plain ints at
 * byte displacements, MPI_IN_PLACE; and MPI_Ialltoallw, two at once. Only rank 0 prints. Any number of
 * ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Rank s sends rank d (d + s) % 3 ints: s * 1000 + d * 10 + k; (s + 1) % np gets none. */
static int nsend(int s, int d)
{
    return d == (s + 1) % np ? 0 : (d + s) % 3 + 1;
}

static void check_counts(void)
{
    int *sc = malloc(np * sizeof(int)), *sd = malloc(np * sizeof(int));
    int *rc = malloc(np * sizeof(int)), *rd = malloc(np * sizeof(int));
    MPI_Datatype *st = malloc(np * sizeof(MPI_Datatype)), *rt = malloc(np * sizeof(MPI_Datatype));
    int *sbuf = malloc(3 * np * sizeof(int)), *rbuf = malloc(4 * np * sizeof(int));
    for (int i = 0; i < np; i++) {
        sc[i] = nsend(me, i);
        sd[i] = 3 * i * (int)sizeof(int);
        rc[i] = nsend(i, me);
        rd[i] = 4 * i * (int)sizeof(int) + (int)sizeof(int); /* a gap before each block */
        st[i] = rt[i] = MPI_INT;
        for (int k = 0; k < 3; k++)
            sbuf[3 * i + k] = me * 1000 + i * 10 + k;
    }
    for (int i = 0; i < 4 * np; i++)
        rbuf[i] = -1;
    MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD);
    int wrong = 0;
    for (int j = 0; j < np; j++)
        for (int k = 0; k < 4; k++) {
            int want = k >= 1 && k <= nsend(j, me) ? j * 1000 + me * 10 + (k - 1) : -1;
            if (rbuf[4 * j + k] != want) {
                if (!wrong)
                    fail("from %d word %d: %d, expected %d", j, k, rbuf[4 * j + k], want);
                wrong++;
            }
        }
    free(sc), free(sd), free(rc), free(rd), free(st), free(rt), free(sbuf), free(rbuf);
    report("Alltoallw: a count per pair, empty blocks, byte displacements with gaps");
}

/* Every rank sends each rank one strided vector (ints 0, 2, 4 of its block) and receives
 * 3 ints per rank. */
static void check_types(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *sc = malloc(np * sizeof(int)), *sd = malloc(np * sizeof(int));
    int *rc = malloc(np * sizeof(int)), *rd = malloc(np * sizeof(int));
    MPI_Datatype *st = malloc(np * sizeof(MPI_Datatype)), *rt = malloc(np * sizeof(MPI_Datatype));
    int *sbuf = malloc(6 * np * sizeof(int)), *rbuf = malloc(3 * np * sizeof(int));
    for (int i = 0; i < np; i++) {
        sc[i] = 1;
        sd[i] = 6 * i * (int)sizeof(int);
        st[i] = vec;
        rc[i] = 3;
        rd[i] = 3 * i * (int)sizeof(int);
        rt[i] = MPI_INT;
        for (int k = 0; k < 6; k++)
            sbuf[6 * i + k] = me * 100 + i * 10 + k;
    }
    MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD);
    int wrong = 0;
    for (int j = 0; j < np; j++)
        for (int k = 0; k < 3; k++)
            wrong += rbuf[3 * j + k] != j * 100 + me * 10 + 2 * k;
    EXPECT(wrong == 0, "%d ints wrong", wrong);
    MPI_Type_free(&vec);
    free(sc), free(sd), free(rc), free(rd), free(st), free(rt), free(sbuf), free(rbuf);
    report("Alltoallw: a strided vector sent, received as ints");
}

static void check_in_place(void)
{
    int *rc = malloc(np * sizeof(int)), *rd = malloc(np * sizeof(int));
    MPI_Datatype *rt = malloc(np * sizeof(MPI_Datatype));
    int *buf = malloc(2 * np * sizeof(int));
    for (int i = 0; i < np; i++) {
        rc[i] = 2;
        rd[i] = 2 * i * (int)sizeof(int);
        rt[i] = MPI_INT;
        buf[2 * i] = me * 100 + i;
        buf[2 * i + 1] = -(me * 100 + i);
    }
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, rc, rd, rt, MPI_COMM_WORLD);
    int wrong = 0;
    for (int j = 0; j < np; j++)
        wrong += buf[2 * j] != j * 100 + me || buf[2 * j + 1] != -(j * 100 + me);
    EXPECT(wrong == 0, "%d blocks wrong", wrong);
    free(rc), free(rd), free(rt), free(buf);
    report("Alltoallw: MPI_IN_PLACE");
}

/* Two MPI_Ialltoallw at once (different types per block), completed out of order. */
static void check_nonblocking(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *c1 = malloc(np * sizeof(int)), *d1 = malloc(np * sizeof(int));
    int *c2 = malloc(np * sizeof(int)), *d2 = malloc(np * sizeof(int));
    MPI_Datatype *tv = malloc(np * sizeof(MPI_Datatype)), *ti = malloc(np * sizeof(MPI_Datatype));
    int *s1 = malloc(4 * np * sizeof(int)), *r1 = malloc(2 * np * sizeof(int));
    int *s2 = malloc(np * sizeof(int)), *r2 = malloc(np * sizeof(int));
    for (int i = 0; i < np; i++) {
        c1[i] = 1;
        d1[i] = 4 * i * (int)sizeof(int);
        c2[i] = 2;
        d2[i] = 2 * i * (int)sizeof(int);
        tv[i] = vec;
        ti[i] = MPI_INT;
        for (int k = 0; k < 4; k++)
            s1[4 * i + k] = me * 100 + i * 10 + k;
        s2[i] = me * 1000 + i;
    }
    int one[64], dd[64];
    for (int i = 0; i < np && i < 64; i++) {
        one[i] = 1;
        dd[i] = i * (int)sizeof(int);
    }
    MPI_Request q[2];
    /* First: a vector (ints 0 and 3 of each block) sent, two ints received. */
    MPI_Ialltoallw(s1, c1, d1, tv, r1, c2, d2, ti, MPI_COMM_WORLD, &q[0]);
    /* Second: one int to each rank. */
    MPI_Ialltoallw(s2, one, dd, ti, r2, one, dd, ti, MPI_COMM_WORLD, &q[1]);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    int wrong = 0;
    for (int j = 0; j < np; j++) {
        wrong += r1[2 * j] != j * 100 + me * 10 || r1[2 * j + 1] != j * 100 + me * 10 + 3;
        wrong += r2[j] != j * 1000 + me;
    }
    EXPECT(wrong == 0, "%d blocks wrong", wrong);
    MPI_Type_free(&vec);
    free(c1), free(d1), free(c2), free(d2), free(tv), free(ti), free(s1), free(r1), free(s2),
        free(r2);
    report("Ialltoallw: two at once, a vector type per block, completed out of order");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "alltoallw"))
        return 0;
    check_counts();
    check_types();
    check_in_place();
    if (np <= 64)
        check_nonblocking();
    return finish("alltoallw");
}
