/*
 * comms.c: MPI conformance of communicators, groups and error handlers: Comm_dup (its own
 * matching context), Comm_split (key order, ties, MPI_UNDEFINED), Comm_create, Comm_compare,
 * the group operations, sub-communicators running traffic and collectives at the same time,
 * Comm_free, names, error classes and strings, MPI_ERRORS_RETURN and user error handlers.
 * Only rank 0 prints: one line per check, then "# conformance comms: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int cmp(MPI_Comm a, MPI_Comm b)
{
    int r = -1;
    MPI_Comm_compare(a, b, &r);
    return r;
}
static int gcmp(MPI_Group a, MPI_Group b)
{
    int r = -1;
    MPI_Group_compare(a, b, &r);
    return r;
}
/* This rank's rank and the size of comm, and the world rank of each of its ranks. */
static void layout(MPI_Comm c, int *rank, int *size, int *world)
{
    MPI_Group g, wg;
    MPI_Comm_rank(c, rank);
    MPI_Comm_size(c, size);
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc(*size * sizeof(int));
    for (int i = 0; i < *size; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, *size, idx, wg, world);
    free(idx);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}
/* Expects comm c to hold the world ranks want[0..n-1] in that order, and sum of world ranks
 * by Allreduce and a ring shift by Sendrecv on it to work. */
static void expect_comm(MPI_Comm c, const int *want, int n, const char *what)
{
    int r, s, sum = 0, want_sum = 0, got = -1;
    int *world = malloc(np * sizeof(int));
    layout(c, &r, &s, world);
    EXPECT(s == n && r >= 0 && r < n && want[r] == me, "%s: rank %d of %d", what, r, s);
    for (int i = 0; i < n && i < s; i++) {
        EXPECT(world[i] == want[i], "%s: rank %d is world rank %d, expected %d", what, i, world[i],
               want[i]);
        want_sum += want[i];
    }
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
    EXPECT(sum == want_sum, "%s: Allreduce %d, expected %d", what, sum, want_sum);
    MPI_Sendrecv(&me, 1, MPI_INT, (r + 1) % s, 0, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c,
                 MPI_STATUS_IGNORE);
    EXPECT(got == want[(r + s - 1) % s], "%s: ring got %d", what, got);
    free(world);
}

/* Comm_dup: congruent with the parent, and a context of its own: with the same tag and
 * source, a receive on the dup gets the dup's message even though the parent's was sent
 * first; a collective on the dup runs while a parent message is pending. */
static void check_dup(void)
{
    MPI_Comm d;
    MPI_Request r[2];
    int a = me * 10 + 1, b = me * 10 + 2, x = -1, y = -1, root = np - 1, bc = -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    EXPECT(cmp(MPI_COMM_WORLD, MPI_COMM_WORLD) == MPI_IDENT, "world vs world not IDENT");
    EXPECT(cmp(MPI_COMM_WORLD, d) == MPI_CONGRUENT, "world vs dup: %d", cmp(MPI_COMM_WORLD, d));
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Isend(&a, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 5, d, &r[1]);
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    EXPECT(x == left * 10 + 1 && y == left * 10 + 2, "world got %d, dup got %d", x, y);
    MPI_Isend(&a, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &r[0]);
    if (me == root)
        bc = 4242;
    MPI_Bcast(&bc, 1, MPI_INT, root, d);
    MPI_Recv(&x, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    EXPECT(bc == 4242 && x == left * 10 + 1, "Bcast on dup %d, world message %d", bc, x);
    MPI_Comm_free(&d);
    EXPECT(d == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
    report("Comm_dup: CONGRUENT, separate matching from the parent, collective beside p2p");
}

/* Comm_split by parity with key = rank, with key = -rank (reverse order), with equal keys
 * (ties keep the parent's order), and with MPI_UNDEFINED for every third rank. */
static void check_split(void)
{
    int *want = malloc(np * sizeof(int)), n = 0;
    MPI_Comm even_odd, rev, tie, third;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &even_odd);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, 7, &tie);
    for (int i = me % 2; i < np; i += 2)
        want[n++] = i;
    expect_comm(even_odd, want, n, "split by parity");
    expect_comm(tie, want, n, "split with equal keys");
    EXPECT(cmp(even_odd, tie) == MPI_CONGRUENT, "parity vs ties: %d", cmp(even_odd, tie));
    for (int i = 0; i < n / 2; i++) {
        int t = want[i];
        want[i] = want[n - 1 - i], want[n - 1 - i] = t;
    }
    expect_comm(rev, want, n, "split with reversed keys");
    EXPECT(cmp(even_odd, rev) == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "parity vs reversed: %d",
           cmp(even_odd, rev));
    MPI_Comm_split(MPI_COMM_WORLD, me % 3 == 2 ? MPI_UNDEFINED : me % 3, 0, &third);
    if (me % 3 == 2) {
        EXPECT(third == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
    } else {
        n = 0;
        for (int i = me % 3; i < np; i += 3)
            want[n++] = i;
        EXPECT(third != MPI_COMM_NULL, "no communicator for color %d", me % 3);
        if (third != MPI_COMM_NULL) {
            expect_comm(third, want, n, "split by rank mod 3");
            MPI_Comm_free(&third);
        }
    }
    MPI_Comm_free(&even_odd), MPI_Comm_free(&rev), MPI_Comm_free(&tie);
    free(want);
    report("Comm_split: parity, reversed keys, equal keys, MPI_UNDEFINED gives COMM_NULL");
}

/* Comm_create from groups: the even ranks (congruent with the split by parity), the even
 * ranks in reverse order (similar), the empty group (MPI_COMM_NULL everywhere). Compare
 * answers for world, self and a reordered whole world. */
static void check_create_compare(void)
{
    MPI_Group wg, eg, rg;
    MPI_Comm ec, rc, ecs, empty, whole_rev;
    int *evens = malloc(np * sizeof(int)), n = 0;
    for (int i = 0; i < np; i += 2)
        evens[n++] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, evens, &eg);
    for (int i = 0; i < n / 2; i++) {
        int t = evens[i];
        evens[i] = evens[n - 1 - i], evens[n - 1 - i] = t;
    }
    MPI_Group_incl(wg, n, evens, &rg);
    MPI_Comm_create(MPI_COMM_WORLD, eg, &ec);
    MPI_Comm_create(MPI_COMM_WORLD, rg, &rc);
    MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &empty);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : 0, me, &ecs);
    EXPECT(empty == MPI_COMM_NULL, "Comm_create with the empty group gave a communicator");
    if (me % 2) {
        EXPECT(ec == MPI_COMM_NULL && rc == MPI_COMM_NULL, "non-member got a communicator");
    } else {
        expect_comm(rc, evens, n, "created from the reversed even ranks");
        EXPECT(cmp(ec, ecs) == MPI_CONGRUENT, "created vs split: %d", cmp(ec, ecs));
        EXPECT(cmp(ec, rc) == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "evens vs reversed: %d",
               cmp(ec, rc));
        EXPECT(cmp(ec, MPI_COMM_WORLD) == MPI_UNEQUAL, "evens vs world: %d",
               cmp(ec, MPI_COMM_WORLD));
        MPI_Comm_free(&ec), MPI_Comm_free(&rc), MPI_Comm_free(&ecs);
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &whole_rev);
    EXPECT(cmp(whole_rev, MPI_COMM_WORLD) == MPI_SIMILAR, "reordered world vs world: %d",
           cmp(whole_rev, MPI_COMM_WORLD));
    EXPECT(cmp(MPI_COMM_SELF, MPI_COMM_WORLD) == MPI_UNEQUAL, "self vs world: %d",
           cmp(MPI_COMM_SELF, MPI_COMM_WORLD));
    MPI_Comm_free(&whole_rev);
    MPI_Group_free(&eg), MPI_Group_free(&rg), MPI_Group_free(&wg);
    EXPECT(wg == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
    free(evens);
    report("Comm_create from groups; Comm_compare IDENT/CONGRUENT/SIMILAR/UNEQUAL");
}

/* Group operations on the world group: incl/excl/range_incl/range_excl, size and rank,
 * translate_ranks (MPI_UNDEFINED for non-members, MPI_PROC_NULL kept), union,
 * intersection, difference and their compare results. */
static void check_groups(void)
{
    MPI_Group wg, e, o, er, or, u, in, d, none;
    int *evens = malloc(np * sizeof(int)), *all = malloc(np * sizeof(int)), ne = 0, s = -1, r;
    int *tr = malloc(np * sizeof(int));
    for (int i = 0; i < np; i += 2)
        evens[ne++] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, ne, evens, &e);
    MPI_Group_excl(wg, ne, evens, &o);
    int range[1][3] = {{0, np - 1, 2}};
    MPI_Group_range_incl(wg, 1, range, &er);
    MPI_Group_range_excl(wg, 1, range, & or);
    EXPECT(gcmp(e, er) == MPI_IDENT && gcmp(o, or) == MPI_IDENT,
           "range_incl/excl differ from incl/excl: %d %d", gcmp(e, er), gcmp(o, or));
    MPI_Group_size(o, &s);
    MPI_Group_rank(o, &r);
    EXPECT(s == np - ne && r == (me % 2 ? me / 2 : MPI_UNDEFINED), "odd group: size %d rank %d", s,
           r);
    MPI_Group_rank(e, &r);
    EXPECT(r == (me % 2 ? MPI_UNDEFINED : me / 2), "even group: rank %d", r);
    for (int i = 0; i < np; i++)
        all[i] = i;
    MPI_Group_translate_ranks(wg, np, all, e, tr);
    for (int i = 0; i < np; i++)
        EXPECT(tr[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate world %d to evens: %d", i,
               tr[i]);
    all[0] = MPI_PROC_NULL;
    MPI_Group_translate_ranks(wg, 1, all, e, tr);
    EXPECT(tr[0] == MPI_PROC_NULL, "translate of MPI_PROC_NULL: %d", tr[0]);
    MPI_Group_union(e, o, &u);
    MPI_Group_intersection(wg, e, &in);
    MPI_Group_difference(wg, e, &d);
    MPI_Group_intersection(e, o, &none);
    /* union: the evens, then the odds: the world's order only for 2 ranks */
    EXPECT(gcmp(u, wg) == (np <= 2 ? MPI_IDENT : MPI_SIMILAR), "union vs world: %d", gcmp(u, wg));
    MPI_Group_rank(u, &r);
    EXPECT(r == (me % 2 ? ne + me / 2 : me / 2), "rank in the union: %d", r);
    EXPECT(gcmp(in, e) == MPI_IDENT && gcmp(d, o) == MPI_IDENT, "intersection %d difference %d",
           gcmp(in, e), gcmp(d, o));
    MPI_Group_size(none, &s);
    EXPECT(s == 0 && gcmp(none, MPI_GROUP_EMPTY) == MPI_IDENT, "disjoint intersection size %d", s);
    EXPECT(gcmp(e, o) == MPI_UNEQUAL, "evens vs odds: %d", gcmp(e, o));
    MPI_Group g[] = {wg, e, o, er, or, u, in, d, none};
    for (int i = 0; i < 9; i++)
        MPI_Group_free(&g[i]);
    free(evens), free(all), free(tr);
    report("groups: incl/excl/range, rank, translate_ranks, union/intersection/difference");
}

/* Two halves (split by rank < np/2), each split again by parity: on every level a ring
 * message with the same tag is pending while the level runs Allreduce and Bcast; nothing
 * mixes, and each level's results are its own. */
static void check_concurrent_subcomms(void)
{
    MPI_Comm half, quarter;
    MPI_Comm lv[3] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
    MPI_Comm_split(MPI_COMM_WORLD, me < np / 2, me, &half);
    MPI_Comm_split(half, me % 2, me, &quarter);
    lv[1] = half, lv[2] = quarter;
    MPI_Request req[3];
    int out[3], in[3], sum[3], bc[3], rk[3], sz[3];
    for (int l = 0; l < 3; l++) {
        MPI_Comm_rank(lv[l], &rk[l]);
        MPI_Comm_size(lv[l], &sz[l]);
        out[l] = me * 100 + l;
        MPI_Isend(&out[l], 1, MPI_INT, (rk[l] + 1) % sz[l], 9, lv[l], &req[l]);
    }
    for (int l = 2; l >= 1; l--) {
        int one = me + 1;
        MPI_Allreduce(&one, &sum[l], 1, MPI_INT, MPI_SUM, lv[l]);
        bc[l] = rk[l] == sz[l] - 1 ? me * 1000 + l : -1;
        MPI_Bcast(&bc[l], 1, MPI_INT, sz[l] - 1, lv[l]);
    }
    for (int l = 0; l < 3; l++)
        MPI_Recv(&in[l], 1, MPI_INT, (rk[l] + sz[l] - 1) % sz[l], 9, lv[l], MPI_STATUS_IGNORE);
    MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    for (int l = 1; l < 3; l++) {
        /* members of this level: world ranks on my side of np/2 (and my parity at level 2) */
        int want = 0, last = -1;
        for (int i = 0; i < np; i++)
            if ((i < np / 2) == (me < np / 2) && (l == 1 || i % 2 == me % 2))
                want += i + 1, last = i;
        EXPECT(sum[l] == want && bc[l] == last * 1000 + l, "level %d: sum %d bcast %d", l, sum[l],
               bc[l]);
    }
    for (int l = 0; l < 3; l++) {
        int *w = malloc(np * sizeof(int)), r, s;
        layout(lv[l], &r, &s, w);
        int from = w[(rk[l] + s - 1) % s];
        EXPECT(in[l] == from * 100 + l, "level %d: ring got %d", l, in[l]);
        free(w);
    }
    MPI_Comm_free(&quarter);
    MPI_Comm_free(&half);
    report("sub-communicators: same tag pending on 3 levels while Allreduce/Bcast run");
}

/* 100 dup/free cycles (context ids must be recycled correctly), then traffic on a fresh dup
 * and on a split of a dup; names of the predefined communicators and of a named dup. */
static void check_free_names(void)
{
    MPI_Comm d, s;
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1, x = -1;
    for (int i = 0; i < 100; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_free(&d);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_split(d, 0, -me, &s);
    MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_MAX, s);
    EXPECT(x == np - 1, "Allreduce after 100 dup/free: %d", x);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    EXPECT(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world's name '%s' (%d)", name, len);
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    EXPECT(!strcmp(name, "MPI_COMM_SELF"), "self's name '%s'", name);
    MPI_Comm_set_name(d, "conformance dup");
    MPI_Comm_get_name(d, name, &len);
    EXPECT(!strcmp(name, "conformance dup") && len == 15, "dup's name '%s' (%d)", name, len);
    MPI_Comm_free(&s);
    MPI_Comm_free(&d);
    report("Comm_free: 100 dup/free cycles, then a dup and split work; Comm_get/set_name");
}

static int eclass(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

/* Error classes map to themselves and have a string; MPI_ERRORS_RETURN on a dup turns an
 * invalid rank, tag, count or communicator into a returned error of the right class; the
 * dup's own dup inherits the handler; the communicator stays usable. */
static void check_errors(void)
{
    static const int classes[] = {
        MPI_SUCCESS,       MPI_ERR_BUFFER,  MPI_ERR_COUNT,    MPI_ERR_TYPE,  MPI_ERR_TAG,
        MPI_ERR_COMM,      MPI_ERR_RANK,    MPI_ERR_REQUEST,  MPI_ERR_ROOT,  MPI_ERR_GROUP,
        MPI_ERR_OP,        MPI_ERR_ARG,     MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
        MPI_ERR_IN_STATUS, MPI_ERR_PENDING, MPI_ERR_UNKNOWN};
    char str[MPI_MAX_ERROR_STRING];
    EXPECT(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);
    for (unsigned i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        int len = -1;
        str[0] = 0;
        MPI_Error_string(classes[i], str, &len);
        EXPECT(eclass(classes[i]) == classes[i], "class of %d is %d", classes[i],
               eclass(classes[i]));
        EXPECT(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(str) == len,
               "Error_string of %d: length %d", classes[i], len);
        EXPECT(classes[i] <= MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", classes[i]);
    }
    MPI_Comm d, dd;
    MPI_Errhandler eh;
    int x = me, rc;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(d, &eh);
    EXPECT(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_Comm_dup(d, &dd);
    rc = MPI_Send(&x, 1, MPI_INT, np, 0, dd);
    EXPECT(eclass(rc) == MPI_ERR_RANK, "send to rank np (inherited handler): class %d", eclass(rc));
    rc = MPI_Recv(&x, 1, MPI_INT, -5, 0, d, MPI_STATUS_IGNORE);
    EXPECT(eclass(rc) == MPI_ERR_RANK, "receive from rank -5: class %d", eclass(rc));
    rc = MPI_Send(&x, 1, MPI_INT, 0, -1, d);
    EXPECT(eclass(rc) == MPI_ERR_TAG, "tag -1: class %d", eclass(rc));
    rc = MPI_Send(&x, -1, MPI_INT, 0, 0, d);
    EXPECT(eclass(rc) == MPI_ERR_COUNT, "count -1: class %d", eclass(rc));
    rc = MPI_Bcast(&x, 1, MPI_INT, np, d);
    EXPECT(eclass(rc) == MPI_ERR_ROOT, "Bcast root np: class %d", eclass(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    EXPECT(eclass(rc) == MPI_ERR_COMM, "send on MPI_COMM_NULL: class %d", eclass(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    rc = MPI_Sendrecv_replace(&x, 1, MPI_INT, (me + 1) % np, 1, (me + np - 1) % np, 1, d,
                              MPI_STATUS_IGNORE);
    EXPECT(rc == MPI_SUCCESS && x == (me + np - 1) % np, "after the errors: rc %d x %d", rc, x);
    MPI_Comm_free(&dd);
    MPI_Comm_free(&d);
    report("error classes and strings; ERRORS_RETURN: invalid rank/tag/count/root/comm");
}

static int handler_calls, handler_code;
static MPI_Comm handler_comm;
static void handler(MPI_Comm *c, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *c;
}

/* A user error handler (Comm_create_errhandler) is called once with the communicator and
 * the error, and the failing call returns the error. */
static void check_user_handler(void)
{
    MPI_Comm d;
    MPI_Errhandler eh;
    int x = 0, rc;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(d, eh);
    MPI_Errhandler_free(&eh);
    EXPECT(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not set MPI_ERRHANDLER_NULL");
    rc = MPI_Send(&x, 1, MPI_INT, np + 3, 0, d);
    EXPECT(handler_calls == 1 && handler_comm == d && eclass(handler_code) == MPI_ERR_RANK,
           "handler: %d calls, class %d, same comm %d", handler_calls, eclass(handler_code),
           handler_comm == d);
    EXPECT(eclass(rc) == MPI_ERR_RANK, "the call returned class %d", eclass(rc));
    MPI_Comm_free(&d);
    report("user error handler: called with the communicator and code, call returns it");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "comms"))
        return 1;
    check_dup();
    check_split();
    check_create_compare();
    check_groups();
    check_concurrent_subcomms();
    check_free_names();
    check_errors();
    check_user_handler();
    return finish("comms");
}
