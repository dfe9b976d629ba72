! f90_more.f90: the rest of the table through `use mpi`: v-collectives, scans,
! non-blocking collectives, Waitany/Testall, Cartesian topologies, groups, indexed-block
! types, strings. Output as f90_mpi.f90's: "ok N - ..." per check (verdicts reduced with
! MPI_LAND over every rank), values seen, "# fortran f90_more: N checks, M failed".
module checks
    use mpi
    implicit none
    integer :: nchecks = 0, nfailed = 0, me = -1
contains
    ! Every rank, collectively: one check.
    subroutine check(what, good)
        character(len=*), intent(in) :: what
        logical, intent(in) :: good
        logical :: all
        integer :: ierr
        call MPI_Allreduce(good, all, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
        nchecks = nchecks + 1
        if (.not. all) nfailed = nfailed + 1
        if (me == 0 .and. all) write (*, '(A,I0,A,A)') 'ok ', nchecks, ' - ', what
        if (me == 0 .and. .not. all) write (*, '(A,I0,A,A)') 'not ok ', nchecks, ' - ', what
    end subroutine check
end module checks

program f90_more
    use mpi
    use checks
    implicit none
    integer, parameter :: MAXNP = 64, NDIMS = 2
    integer :: ierr, np, i, n, v, sv, left, right, idx, req, reqs(3), cart, grp, sub, subgrp
    integer :: counts(MAXNP), displs(MAXNP), rcounts(MAXNP), rdispls(MAXNP)
    integer :: sbuf(MAXNP * MAXNP), rbuf(MAXNP * MAXNP), x, y, total, dt, tsize
    integer :: dims(NDIMS), coords(NDIMS), src, dst, crank, status(MPI_STATUS_SIZE)
    integer :: statuses(MPI_STATUS_SIZE, 3), evens(MAXNP), nevens, subnp
    logical :: periods(NDIMS), flag
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    character(len=MPI_MAX_ERROR_STRING) :: estr

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
    left = mod(me + np - 1, np)
    right = mod(me + 1, np)
    call MPI_Get_version(v, sv, ierr)
    call check('MPI_Get_version 3.x', v == 3 .and. sv >= 0)

    ! Rank r contributes r + 1 values r; rank 0 gathers them in rank order.
    counts(1:np) = (/ (i + 1, i = 0, np - 1) /)
    displs(1) = 0
    do i = 2, np
        displs(i) = displs(i - 1) + counts(i - 1)
    end do
    total = displs(np) + counts(np)
    sbuf(1:me + 1) = me
    rbuf = -1
    call MPI_Gatherv(sbuf, me + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, 0, &
                     MPI_COMM_WORLD, ierr)
    call check('MPI_Gatherv', me /= 0 .or. (rbuf(1) == 0 .and. rbuf(total) == np - 1 .and. &
               sum(rbuf(1:total)) == sum((/ (i * (i + 1), i = 0, np - 1) /))))
    sbuf(1:total) = rbuf(1:total)
    rbuf = -1
    call MPI_Scatterv(sbuf, counts, displs, MPI_INTEGER, rbuf, me + 1, MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    call check('MPI_Scatterv', all(rbuf(1:me + 1) == me) .and. rbuf(me + 2) == -1)
    sbuf(1:me + 1) = me
    rbuf = -1
    call MPI_Allgatherv(sbuf, me + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    if (me == 0) write (*, '(A,*(1X,I0))') '# allgatherv:', rbuf(1:total)
    call check('MPI_Allgatherv', rbuf(total) == np - 1 .and. rbuf(total + 1) == -1)
    ! Alltoallv: to rank j, j + 1 copies of 100 * me + j.
    n = 0
    do i = 0, np - 1
        counts(i + 1) = i + 1
        displs(i + 1) = n
        sbuf(n + 1:n + i + 1) = 100 * me + i
        n = n + i + 1
        rcounts(i + 1) = me + 1
        rdispls(i + 1) = i * (me + 1)
    end do
    rbuf = -1
    call MPI_Alltoallv(sbuf, counts, displs, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoallv', rbuf(1) == me .and. rbuf(np * (me + 1)) == 100 * (np - 1) + me)
    sbuf(1:np) = (/ (me * i, i = 1, np) /)
    rcounts(1:np) = 1
    call MPI_Reduce_scatter(sbuf, x, rcounts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce_scatter', x == (me + 1) * np * (np - 1) / 2)
    call MPI_Scan(me + 1, x, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    y = -7
    call MPI_Exscan(me + 1, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Scan, MPI_Exscan', x == (me + 1) * (me + 2) / 2 .and. &
               (me == 0 .or. y == me * (me + 1) / 2))

    ! Non-blocking collectives, completed by Wait, Waitany, Test.
    call MPI_Iallreduce(me, x, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, status, ierr)
    call check('MPI_Iallreduce + MPI_Wait', x == np - 1 .and. req == MPI_REQUEST_NULL)
    y = me
    call MPI_Ibcast(y, 1, MPI_INTEGER, np - 1, MPI_COMM_WORLD, reqs(1), ierr)
    reqs(2) = MPI_REQUEST_NULL
    call MPI_Waitany(2, reqs, idx, status, ierr)
    call check('MPI_Ibcast + MPI_Waitany (index 1-based)', y == np - 1 .and. idx == 1 .and. &
               reqs(1) == MPI_REQUEST_NULL)
    call MPI_Waitany(2, reqs, idx, status, ierr)
    call check('MPI_Waitany of null requests: MPI_UNDEFINED', idx == MPI_UNDEFINED)
    call MPI_Ireduce(me, x, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Issend(me, 1, MPI_INTEGER, right, 21, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Recv(y, 1, MPI_INTEGER, left, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Testall(3, reqs, flag, statuses, ierr)
    end do
    call check('MPI_Ireduce, MPI_Ibarrier, MPI_Issend + MPI_Testall', &
               (me /= 0 .or. x == np * (np - 1) / 2) .and. y == left .and. &
               all(reqs == MPI_REQUEST_NULL))
    call MPI_Isend(me, 1, MPI_INTEGER, right, 22, MPI_COMM_WORLD, req, ierr)
    call MPI_Request_free(req, ierr)
    call MPI_Recv(y, 1, MPI_INTEGER, left, 22, MPI_COMM_WORLD, status, ierr)
    call check('MPI_Request_free', req == MPI_REQUEST_NULL .and. y == left)
    x = me
    call MPI_Sendrecv_replace(x, 1, MPI_INTEGER, right, 23, left, 23, MPI_COMM_WORLD, status, &
                              ierr)
    call check('MPI_Sendrecv_replace', x == left .and. status(MPI_SOURCE) == left)

    ! A 2-D periodic grid.
    dims = 0
    call MPI_Dims_create(np, NDIMS, dims, ierr)
    if (me == 0) write (*, '(A,2(1X,I0))') '# dims:', dims
    periods = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, NDIMS, dims, periods, .false., cart, ierr)
    call MPI_Cart_coords(cart, me, NDIMS, coords, ierr)
    call MPI_Cart_rank(cart, coords, crank, ierr)
    call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
    call check('MPI_Dims_create, MPI_Cart_create/coords/rank', &
               product(dims) == np .and. crank == me .and. coords(1) == me / dims(2))
    call check('MPI_Cart_shift (periodic)', &
               dst == coords(1) * dims(2) + mod(coords(2) + 1, dims(2)))
    call MPI_Comm_free(cart, ierr)

    ! Groups: the even ranks make a communicator.
    nevens = (np + 1) / 2
    evens(1:nevens) = (/ (2 * i, i = 0, nevens - 1) /)
    call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
    call MPI_Group_incl(grp, nevens, evens, subgrp, ierr)
    call MPI_Group_size(subgrp, n, ierr)
    call MPI_Comm_create(MPI_COMM_WORLD, subgrp, sub, ierr)
    if (sub /= MPI_COMM_NULL) then
        call MPI_Comm_size(sub, subnp, ierr)
        call MPI_Comm_free(sub, ierr)
    else
        subnp = -1
    end if
    call MPI_Group_free(subgrp, ierr)
    call MPI_Group_free(grp, ierr)
    call check('MPI_Group_incl, MPI_Comm_create', n == nevens .and. &
               (mod(me, 2) == 1 .eqv. subnp == -1) .and. grp == MPI_GROUP_NULL)

    ! An indexed-block type: elements 1, 3, 4 of sbuf, counted by Get_elements.
    sbuf(1:4) = (/ 10, 20, 30, 40 /) + me
    call MPI_Type_create_indexed_block(3, 1, (/ 0, 2, 3 /), MPI_INTEGER, dt, ierr)
    call MPI_Type_commit(dt, ierr)
    call MPI_Type_size(dt, tsize, ierr)
    rbuf(1:3) = -1
    call MPI_Sendrecv(sbuf, 1, dt, right, 24, rbuf, 3, MPI_INTEGER, left, 24, MPI_COMM_WORLD, &
                      status, ierr)
    call MPI_Get_elements(status, MPI_INTEGER, n, ierr)
    call MPI_Type_free(dt, ierr)
    call check('MPI_Type_create_indexed_block, MPI_Get_elements', tsize == 12 .and. n == 3 .and. &
               all(rbuf(1:3) == (/ 10, 30, 40 /) + left))

    ! Strings: lengths reported, the rest blank.
    call MPI_Get_processor_name(pname, n, ierr)
    call check('MPI_Get_processor_name', n > 0 .and. len_trim(pname) == n)
    call MPI_Error_string(MPI_ERR_TAG, estr, n, ierr)
    call MPI_Error_class(MPI_ERR_TAG, x, ierr)
    call check('MPI_Error_string, MPI_Error_class', n > 0 .and. len_trim(estr) == n .and. &
               x == MPI_ERR_TAG)

    if (me == 0) write (*, '(A,I0,A,I0,A)') '# fortran f90_more: ', nchecks, ' checks, ', &
        nfailed, ' failed'
    call MPI_Finalize(ierr)
end program f90_more
