/*
 * mpi_dtype_random_test.c: random nested datatypes against an independent expansion of
 * their typemap, built from MPI_Type_get_contents alone: size, true bounds, MPI_Pack,
 * full and partial unpacks, MPI_Get_elements and contiguity must all agree with it.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include "dtype_impl.h"
#include <stdlib.h>
#include <string.h>

#define OK(x) UT_EQ((x), MPI_SUCCESS)

/* --- random nested types against their typemap ------------------------------------------ */

struct entry {
    MPI_Aint off;
    int size;
};

struct tmap {
    struct entry e[4096];
    int n, overflow;
};

static void put(struct tmap *m, MPI_Aint off, int size)
{
    if (m->n == 4096) {
        m->overflow = 1;
        return;
    }
    m->e[m->n++] = (struct entry){off, size};
}

/* The typemap of one element of t at off, in order, from MPI_Type_get_contents alone: a
 * model of MPI's definitions independent of the library's own walks. */
static void expand(MPI_Datatype t, MPI_Aint off, struct tmap *m)
{
    int ni, na, nt, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        put(m, off, mpi_t_size(t));
        return;
    }
    int ints[64];
    MPI_Aint addrs[32], lb, ext;
    MPI_Datatype types[32];
    UT_ASSERT(ni <= 64 && na <= 32 && nt <= 32);
    OK(MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types));
    OK(MPI_Type_get_extent(types[0], &lb, &ext));
    int c = ni ? ints[0] : 0;
    switch (comb) {
    case MPI_COMBINER_CONTIGUOUS:
        for (int k = 0; k < c; k++)
            expand(types[0], off + k * ext, m);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < c; i++)
            for (int k = 0; k < ints[1]; k++)
                expand(types[0],
                       off + (comb == MPI_COMBINER_VECTOR ? i * ints[2] * ext : i * addrs[0]) +
                           k * ext,
                       m);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < c; i++)
            for (int k = 0; k < ints[1 + i]; k++)
                expand(types[0], off + (ints[1 + c + i] + k) * ext, m);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < c; i++)
            for (int k = 0; k < ints[1 + i]; k++)
                expand(types[0], off + addrs[i] + k * ext, m);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < c; i++)
            for (int k = 0; k < ints[1]; k++)
                expand(types[0], off + (ints[2 + i] + k) * ext, m);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < c; i++)
            for (int k = 0; k < ints[1]; k++)
                expand(types[0], off + addrs[i] + k * ext, m);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < c; i++) {
            MPI_Aint l, x;
            OK(MPI_Type_get_extent(types[i], &l, &x));
            for (int k = 0; k < ints[1 + i]; k++)
                expand(types[i], off + addrs[i] + k * x, m);
        }
        break;
    default: /* dup, resized */
        expand(types[0], off, m);
        break;
    }
    for (int i = 0; i < nt; i++) {
        int a, b, c2, cb;
        OK(MPI_Type_get_envelope(types[i], &a, &b, &c2, &cb));
        if (cb != MPI_COMBINER_NAMED)
            mpi_t_free(types[i]);
    }
}

static int rnd(int n)
{
    return rand() % n;
}

/* A random type of nesting depth <= d over a few basic types. */
static MPI_Datatype random_type(int d)
{
    static MPI_Datatype basics[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_SHORT};
    if (d == 0 || rnd(4) == 0)
        return basics[rnd(4)];
    MPI_Datatype in = random_type(d - 1), t = MPI_DATATYPE_NULL, in2 = MPI_DATATYPE_NULL;
    int n = rnd(4), bl[4], di[4];
    MPI_Aint ad[4];
    for (int i = 0; i < 4; i++) {
        bl[i] = rnd(3);
        di[i] = rnd(9) - 3;
        ad[i] = rnd(40) - 8;
    }
    switch (rnd(10)) {
    case 0:
        OK(MPI_Type_contiguous(n, in, &t));
        break;
    case 1:
        OK(MPI_Type_vector(n, bl[0], di[0], in, &t));
        break;
    case 2:
        OK(MPI_Type_create_hvector(n, bl[0], ad[0], in, &t));
        break;
    case 3:
        OK(MPI_Type_indexed(n, bl, di, in, &t));
        break;
    case 4:
        OK(MPI_Type_create_hindexed(n, bl, ad, in, &t));
        break;
    case 5:
        OK(MPI_Type_create_indexed_block(n, bl[0], di, in, &t));
        break;
    case 6:
        OK(MPI_Type_create_hindexed_block(n, bl[0], ad, in, &t));
        break;
    case 7:
        in2 = random_type(d - 1);
        OK(MPI_Type_create_struct(2, bl, ad, (MPI_Datatype[]){in, in2}, &t));
        break;
    case 8:
        OK(MPI_Type_create_resized(in, ad[1], rnd(48) + 1, &t));
        break;
    default:
        OK(MPI_Type_dup(in, &t));
        break;
    }
    if (in2 != MPI_DATATYPE_NULL && !in2->predefined)
        mpi_t_free(in2);
    if (!in->predefined)
        mpi_t_free(in);
    return t;
}

UT_TEST(mpi_dt_random_typemaps)
{
    static struct tmap m;
    static unsigned char src[8192], dst[8192], ref[8192], packed[8192], rpacked[8192];
    mpi_t_setup(0);
    srand(12345);
    int tested = 0;
    for (int iter = 0; iter < 3000 && tested < 600; iter++) {
        MPI_Datatype t = random_type(3);
        if (t->predefined)
            continue;
        int count = 1 + rnd(3);
        MPI_Aint lb, ext;
        OK(MPI_Type_get_extent(t, &lb, &ext));
        m.n = m.overflow = 0;
        for (int k = 0; k < count && !m.overflow; k++)
            expand(t, k * ext, &m);
        MPI_Aint lo = 0, hi = 0;
        size_t bytes = 0;
        for (int i = 0; i < m.n; i++) {
            lo = i == 0 || m.e[i].off < lo ? m.e[i].off : lo;
            hi = i == 0 || m.e[i].off + m.e[i].size > hi ? m.e[i].off + m.e[i].size : hi;
            bytes += (size_t)m.e[i].size;
        }
        if (m.overflow || lo < -4000 || hi > 4000) {
            mpi_t_free(t);
            continue;
        }
        tested++;
        t = mpi_t_commit(t);
        UT_EQ(dt_size(t) * (size_t)count, bytes);
        if (m.n > 0 && count == 1) {
            MPI_Aint tlb, text;
            OK(MPI_Type_get_true_extent(t, &tlb, &text));
            UT_EQ(tlb, lo);
            UT_EQ(tlb + text, hi);
        }
        /* the buffer's origin sits 4096 bytes in, so that negative offsets fit */
        for (int i = 0; i < 8192; i++)
            src[i] = (unsigned char)rand();
        size_t n = 0;
        for (int i = 0; i < m.n; i++) {
            memcpy(rpacked + n, src + 4096 + m.e[i].off, (size_t)m.e[i].size);
            n += (size_t)m.e[i].size;
        }
        int pos = 0;
        OK(MPI_Pack(src + 4096, count, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        UT_EQ(pos, bytes);
        UT_ASSERT(!memcmp(packed, rpacked, bytes));
        /* full and partial unpacks: whole basic elements in typemap order */
        size_t cut = rnd(3) ? bytes : (size_t)rnd((int)bytes + 1);
        memset(dst, 0, sizeof dst);
        memset(ref, 0, sizeof ref);
        n = 0;
        for (int i = 0; i < m.n && n + (size_t)m.e[i].size <= cut; i++) {
            memcpy(ref + 4096 + m.e[i].off, rpacked + n, (size_t)m.e[i].size);
            n += (size_t)m.e[i].size;
        }
        dt_unpack(packed, cut, dst + 4096, count, t);
        UT_ASSERT(!memcmp(dst, ref, sizeof dst));
        MPI_Status st = {.mpi_count_ = bytes};
        int elems;
        OK(MPI_Get_elements(&st, t, &elems));
        UT_EQ(elems, m.n);
        if (dt_contig(t) && bytes) { /* the typemap runs in order from lb, extent == size */
            UT_EQ((size_t)ext, dt_size(t));
            for (int i = 0, off = (int)lb; i < m.n; off += m.e[i].size, i++)
                UT_EQ(m.e[i].off, off);
        }
        mpi_t_free(t);
    }
    UT_EQ(tested, 600);
}
