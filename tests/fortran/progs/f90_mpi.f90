! f90_mpi.f90: the Fortran 90 bindings through `use mpi`. Rank 0 prints one
! "ok N - ..." / "not ok N - ..." line per check (a check holds on every rank: the ranks'
! verdicts are reduced with MPI_LAND over MPI_LOGICAL) and the values it saw, then
! "# fortran f90_mpi: N checks, M failed". The output depends only on the number of ranks.
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
        if (.not. all .or. ierr /= MPI_SUCCESS) nfailed = nfailed + 1
        if (me == 0) then
            if (all .and. ierr == MPI_SUCCESS) then
                write (*, '(A,I0,A,A)') 'ok ', nchecks, ' - ', what
            else
                write (*, '(A,I0,A,A)') 'not ok ', nchecks, ' - ', what
            end if
        end if
    end subroutine check
end module checks

program f90_mpi
    use mpi
    use checks
    implicit none
    integer, parameter :: NV = 3, TAG0 = 100, MAXNP = 64
    integer :: ierr, np, left, right, i, n, color, sub, subnp, subme, dup, cmp, vec, cont
    integer :: ibuf(NV), jbuf(NV), isum, imax, imin, inplace(2), mat(4, NV), row(NV)
    integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2), req
    integer :: gathered(MAXNP), scattered, all2all_in(MAXNP), all2all_out(MAXNP), tsize
    integer(kind=8) :: i8, i8sum
    real(kind=4) :: r4, r4sum
    double precision :: d, dsum, dmax, dmin, t0
    complex :: c, csum
    complex(kind=8) :: z, zsum
    logical :: flag, lor, land_
    character(len=12) :: word

    call MPI_Init(i)
    call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
    call check('MPI_Init, MPI_Comm_rank, MPI_Comm_size', i == MPI_SUCCESS .and. ierr == 0)
    if (me == 0) write (*, '(A,I0)') '# ranks: ', np
    call MPI_Initialized(flag, ierr)
    call check('MPI_Initialized is .true.', flag)
    call MPI_Finalized(flag, ierr)
    call check('MPI_Finalized is .false.', .not. flag)
    left = mod(me + np - 1, np)
    right = mod(me + 1, np)

    ! Ring: even ranks send first; the status says who and which tag, Get_count how much.
    ibuf = (/ me, me * 10, me * 100 /)
    jbuf = -1
    if (mod(me, 2) == 0) then
        call MPI_Send(ibuf, NV, MPI_INTEGER, right, TAG0 + me, MPI_COMM_WORLD, ierr)
        call MPI_Recv(jbuf, NV, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
    else
        call MPI_Recv(jbuf, NV, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                      status, ierr)
        call MPI_Send(ibuf, NV, MPI_INTEGER, right, TAG0 + me, MPI_COMM_WORLD, ierr)
    end if
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call check('ring send/recv data', all(jbuf == (/ left, left * 10, left * 100 /)))
    call check('ring status MPI_SOURCE and MPI_TAG', &
               status(MPI_SOURCE) == left .and. status(MPI_TAG) == TAG0 + left)
    call check('MPI_Get_count of MPI_INTEGER', n == NV)
    call MPI_Get_count(status, MPI_CHARACTER, n, ierr)
    call check('MPI_Get_count of MPI_CHARACTER (bytes)', n == 4 * NV)

    ! Sendrecv around the ring, the status ignored.
    jbuf = -1
    call MPI_Sendrecv(ibuf, NV, MPI_INTEGER, right, 7, jbuf, NV, MPI_INTEGER, left, 7, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check('MPI_Sendrecv with MPI_STATUS_IGNORE', jbuf(3) == left * 100)

    ! Broadcasts: INTEGER array, DOUBLE PRECISION, CHARACTER.
    ibuf = 0
    d = 0
    word = ''
    if (me == 0) then
        ibuf = (/ 7, 8, 9 /)
        d = 2.5d0
        word = 'hello world'
    end if
    call MPI_Bcast(ibuf, NV, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(d, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(word, len(word), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    call check('MPI_Bcast INTEGER, DOUBLE PRECISION, CHARACTER', &
               all(ibuf == (/ 7, 8, 9 /)) .and. d == 2.5d0 .and. word == 'hello world')

    ! Reductions over every rank.
    call MPI_Allreduce(me + 1, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(me + 1, imax, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(me + 1, imin, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (me == 0) write (*, '(A,3(1X,I0))') '# INTEGER sum max min:', isum, imax, imin
    call check('MPI_Allreduce INTEGER SUM MAX MIN', &
               isum == np * (np + 1) / 2 .and. imax == np .and. imin == 1)
    d = 0.5d0 * me
    call MPI_Allreduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(d, dmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(d, dmin, 1, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (me == 0) write (*, '(A,3(1X,F0.2))') '# DOUBLE PRECISION sum max min:', dsum, dmax, dmin
    call check('MPI_Allreduce DOUBLE PRECISION SUM MAX MIN', &
               dsum == 0.25d0 * np * (np - 1) .and. dmax == 0.5d0 * (np - 1) .and. dmin == 0)
    c = cmplx(me, 1.0)
    call MPI_Allreduce(c, csum, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    z = cmplx(1.0d0, -me, kind=8)
    call MPI_Allreduce(z, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (me == 0) write (*, '(A,4(1X,F0.1))') '# COMPLEX, DOUBLE COMPLEX sums:', csum, zsum
    call check('MPI_Allreduce COMPLEX and DOUBLE COMPLEX SUM', &
               csum == cmplx(np * (np - 1) / 2, np) .and. &
               zsum == cmplx(np, -np * (np - 1) / 2, kind=8))
    call MPI_Allreduce(me == 1, lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(me == 1, land_, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce LOGICAL LOR LAND', lor .and. .not. land_)
    i8 = 2_8**40 + me
    call MPI_Allreduce(i8, i8sum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    r4 = 1.5
    call MPI_Allreduce(r4, r4sum, 1, MPI_REAL4, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce INTEGER8 and REAL4 SUM', &
               i8sum == np * 2_8**40 + np * (np - 1) / 2 .and. r4sum == 1.5 * np)
    inplace = (/ me, 1 /)
    call MPI_Allreduce(MPI_IN_PLACE, inplace, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce MPI_IN_PLACE', all(inplace == (/ np * (np - 1) / 2, np /)))
    isum = -1
    call MPI_Reduce(me, isum, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce to rank 0', me /= 0 .or. isum == np * (np - 1) / 2)

    ! Gather, scatter, allgather, alltoall of INTEGERs.
    gathered = -1
    call MPI_Gather(me * 2, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check('MPI_Gather', me /= 0 .or. all(gathered(1:np) == (/ (2 * i, i = 0, np - 1) /)))
    call MPI_Scatter(gathered, 1, MPI_INTEGER, scattered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                     ierr)
    call check('MPI_Scatter', scattered == 2 * me)
    gathered = -1
    call MPI_Allgather(me + 5, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check('MPI_Allgather', all(gathered(1:np) == (/ (i + 5, i = 0, np - 1) /)))
    all2all_in(1:np) = (/ (100 * me + i, i = 0, np - 1) /)
    call MPI_Alltoall(all2all_in, 1, MPI_INTEGER, all2all_out, 1, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoall', all(all2all_out(1:np) == (/ (100 * i + me, i = 0, np - 1) /)))

    ! A derived vector type: row 2 of a 4 x NV matrix (stride 4), to the right neighbour.
    mat = reshape((/ (i, i = 1, 4 * NV) /), (/ 4, NV /)) + 1000 * me
    call MPI_Type_vector(NV, 1, 4, MPI_INTEGER, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    call MPI_Type_size(vec, tsize, ierr)
    row = -1
    call MPI_Sendrecv(mat(2, 1), 1, vec, right, 3, row, NV, MPI_INTEGER, left, 3, &
                      MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call check('MPI_Type_vector row of a matrix', &
               all(row == (/ 2, 6, 10 /) + 1000 * left) .and. n == NV .and. tsize == 4 * NV)
    call MPI_Type_free(vec, ierr)
    call check('MPI_Type_free makes MPI_DATATYPE_NULL', vec == MPI_DATATYPE_NULL)
    call MPI_Type_contiguous(NV, MPI_INTEGER, cont, ierr)
    call MPI_Type_commit(cont, ierr)
    ibuf = me
    call MPI_Bcast(ibuf, 1, cont, np - 1, MPI_COMM_WORLD, ierr)
    call MPI_Type_free(cont, ierr)
    call check('MPI_Type_contiguous bcast', all(ibuf == np - 1))
    call MPI_Type_size(MPI_DOUBLE_COMPLEX, tsize, ierr)
    call MPI_Type_size(MPI_LOGICAL, n, ierr)
    call check('MPI_Type_size DOUBLE COMPLEX 16, LOGICAL 4', tsize == 16 .and. n == 4)

    ! Communicators: split by parity, dup, compare, free.
    color = mod(me, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, -me, sub, ierr)
    call MPI_Comm_size(sub, subnp, ierr)
    call MPI_Comm_rank(sub, subme, ierr)
    call MPI_Allreduce(me, isum, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
    call check('MPI_Comm_split by parity, reversed keys', &
               subnp == (np + 1 - color) / 2 .and. subme == (np - 1 - me) / 2 .and. &
               isum == sum((/ (i, i = color, np - 1, 2) /)))
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, cmp, ierr)
    call check('MPI_Comm_dup is MPI_CONGRUENT', cmp == MPI_CONGRUENT)
    call MPI_Comm_free(sub, ierr)
    call MPI_Comm_free(dup, ierr)
    call check('MPI_Comm_free makes MPI_COMM_NULL', sub == MPI_COMM_NULL .and. dup == MPI_COMM_NULL)

    ! Non-blocking: both neighbours at once, Waitall with statuses.
    ibuf = me
    jbuf = -1
    call MPI_Irecv(jbuf(1), 1, MPI_INTEGER, left, 11, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(ibuf(1), 1, MPI_INTEGER, right, 11, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, statuses, ierr)
    call check('MPI_Isend/MPI_Irecv/MPI_Waitall', jbuf(1) == left .and. &
               statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 1) == 11 .and. &
               all(reqs == MPI_REQUEST_NULL))
    call MPI_Irecv(jbuf(2), 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(ibuf(2), 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check('MPI_Waitall with MPI_STATUSES_IGNORE', jbuf(2) == right)
    call MPI_Irecv(n, 1, MPI_INTEGER, left, 13, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(me, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(req, flag, status, ierr)
    end do
    call check('MPI_Test until done', n == left .and. req == MPI_REQUEST_NULL)
    call MPI_Isend(ibuf, NV, MPI_INTEGER, right, 14, MPI_COMM_WORLD, req, ierr)
    call MPI_Probe(left, 14, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call MPI_Recv(jbuf, n, MPI_INTEGER, status(MPI_SOURCE), 14, MPI_COMM_WORLD, &
                  MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check('MPI_Probe, MPI_Get_count, MPI_Wait', n == NV .and. jbuf(3) == left)

    t0 = MPI_Wtime()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check('MPI_Wtime, MPI_Wtick, MPI_Barrier', &
               MPI_Wtime() >= t0 .and. MPI_Wtick() > 0 .and. ierr == MPI_SUCCESS)

    if (me == 0) write (*, '(A,I0,A,I0,A)') '# fortran f90_mpi: ', nchecks, ' checks, ', &
        nfailed, ' failed'
    call MPI_Finalize(ierr)
end program f90_mpi
