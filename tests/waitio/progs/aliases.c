/*
 * aliases.c: a caller of the upper-case names (spec 7.3), which waitio_mpi.h does not
 * declare: like Fortran-minded C code, it declares them itself. Every WAITIO_MPI_Xxx is
 * called once on a universe and its result checked. Run with 2 PBs (any sizes).
 */
#include <mpi.h>
#include <stdlib.h>

#include "waitio_mpi.h"
#include "wcheck.h"

int WAITIO_MPI_Type_size(WAITIO_MPI_Datatype dt, int *size);
int WAITIO_MPI_Isend(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req);
int WAITIO_MPI_Irecv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req);
int WAITIO_MPI_Send(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                    WAITIO_MPI_Comm comm);
int WAITIO_MPI_Recv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                    WAITIO_MPI_Comm comm);
int WAITIO_MPI_Waitall(int count, WAITIO_MPI_Request *reqs, int *statuses);
int WAITIO_MPI_Bcast(void *buf, int count, WAITIO_MPI_Datatype dt, int root, WAITIO_MPI_Comm comm);
int WAITIO_MPI_Reduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                      WAITIO_MPI_Op op, int root, WAITIO_MPI_Comm comm);
int WAITIO_MPI_Allreduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Op op, WAITIO_MPI_Comm comm);
int WAITIO_MPI_Gather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt, int root,
                      WAITIO_MPI_Comm comm);
int WAITIO_MPI_Allgather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Comm comm);
int WAITIO_MPI_Scatter(void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                       WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm);
int WAITIO_MPI_Scatterv(const void *sbuf, const int *scounts, const int *displs,
                        WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                        WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm);
int WAITIO_MPI_Gatherv(const void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf,
                       const int *rcounts, const int *displs, WAITIO_MPI_Datatype rtype, int root,
                       WAITIO_MPI_Comm comm);
int WAITIO_MPI_Barrier(WAITIO_MPI_Comm comm);

int main(int argc, char **argv)
{
    WAITIO_MPI_Comm comm;
    WAITIO_MPI_Request req[2];
    int me, n, size = 0, x, y, st[2 * WAITIO_STATUS_SIZE];
    int *all, *cnt, *dsp;
    long lv, lr = 0;

    MPI_Init(&argc, &argv);
    if (waitio_create_universe(&comm) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    waitio_group_rank(comm, &me);
    waitio_group_size(comm, &n);
    waitio_pb_rank(&wc_pb);
    wc_rank = me;
    all = calloc(n, sizeof(int));
    cnt = calloc(n, sizeof(int));
    dsp = calloc(n, sizeof(int));

    CHECK(WAITIO_MPI_Type_size(WAITIO_MPI_LONG, &size) == 0 && size == 8, "Type_size");

    /* Ring: Isend/Irecv + Waitall, then Send/Recv the other way. */
    x = me * 3;
    y = -1;
    CHECK(WAITIO_MPI_Irecv(&y, 1, WAITIO_MPI_INT, (me + n - 1) % n, 5, comm, &req[0]) == 0 &&
              WAITIO_MPI_Isend(&x, 1, WAITIO_MPI_INT, (me + 1) % n, 5, comm, &req[1]) == 0 &&
              WAITIO_MPI_Waitall(2, req, st) == 0 && y == (me + n - 1) % n * 3,
          "Isend/Irecv/Waitall: got %d", y);
    if (me % 2 == 0 && me + 1 < n) {
        CHECK(WAITIO_MPI_Send(&x, 1, WAITIO_MPI_INT, me + 1, 6, comm) == 0, "Send");
    } else if (me % 2 == 1) {
        CHECK(WAITIO_MPI_Recv(&y, 1, WAITIO_MPI_INT, me - 1, 6, comm) == 0 && y == (me - 1) * 3,
              "Recv: got %d", y);
    }

    x = me == n - 1 ? 42 : 0;
    CHECK(WAITIO_MPI_Bcast(&x, 1, WAITIO_MPI_INT, n - 1, comm) == 0 && x == 42, "Bcast");
    lv = -(long)me - 1;
    CHECK(WAITIO_MPI_Reduce(&lv, &lr, 1, WAITIO_MPI_LONG, WAITIO_MPI_MAX, 0, comm) == 0 &&
              (me != 0 || lr == -1),
          "Reduce MAX: %ld", lr);
    CHECK(WAITIO_MPI_Allreduce(&lv, &lr, 1, WAITIO_MPI_LONG, WAITIO_MPI_SUM, comm) == 0 &&
              lr == -(long)n * (n + 1) / 2,
          "Allreduce SUM: %ld", lr);
    CHECK(WAITIO_MPI_Gather(&me, all, 1, WAITIO_MPI_INT, n - 1, comm) == 0 &&
              (me != n - 1 || all[n - 1] == n - 1),
          "Gather");
    CHECK(WAITIO_MPI_Allgather(&me, all, 1, WAITIO_MPI_INT, comm) == 0 && all[0] == 0 &&
              all[n - 1] == n - 1,
          "Allgather");
    for (int i = 0; i < n; i++) {
        all[i] = 100 + i;
        cnt[i] = 1;
        dsp[i] = n - 1 - i; /* reversed */
    }
    CHECK(WAITIO_MPI_Scatter(all, 1, WAITIO_MPI_INT, &y, 1, WAITIO_MPI_INT, 0, comm) == 0 &&
              y == 100 + me,
          "Scatter: %d", y);
    CHECK(WAITIO_MPI_Scatterv(all, cnt, dsp, WAITIO_MPI_INT, &y, 1, WAITIO_MPI_INT, 0, comm) == 0 &&
              y == 100 + n - 1 - me,
          "Scatterv: %d", y);
    CHECK(WAITIO_MPI_Gatherv(&me, 1, WAITIO_MPI_INT, all, cnt, dsp, WAITIO_MPI_INT, 0, comm) == 0 &&
              (me != 0 || (all[0] == n - 1 && all[n - 1] == 0)),
          "Gatherv");
    CHECK(WAITIO_MPI_Barrier(comm) == 0, "Barrier");
    free(all);
    free(cnt);
    free(dsp);
    waitio_finalize();
    MPI_Finalize();
    return wc_done("aliases");
}
