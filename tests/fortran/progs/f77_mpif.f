! f77_mpif.f: the Fortran 77 bindings through include 'mpif.h' (fixed
! form, no explicit interfaces: every argument goes by reference as it
! is). Rank 0 prints "ok N - ..." / "not ok N - ..." per check (each
! rank's verdict reduced with MPI_LAND over MPI_LOGICAL) and the values
! it saw, then "# fortran f77_mpif: N checks, M failed".
      program f77mpi
      implicit none
      include 'mpif.h'
      integer nv
      parameter (nv=4)
      integer ierr, me, np, left, right, i, n, sub, subnp, vec
      integer ibuf(nv), jbuf(nv), isum, imax, imin, inpl(2)
      integer mat(3,nv), row(nv), reqs(2)
      integer status(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE,2)
      double precision d, dsum, dmax, dmin
      complex c, csum
      double complex z, zsum
      integer nchk, nbad
      common /chk/ nchk, nbad
      nchk = 0
      nbad = 0

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
      call check(me, 'MPI_INIT, MPI_COMM_RANK', ierr .eq. 0)
      left = mod(me + np - 1, np)
      right = mod(me + 1, np)

! Ring, even ranks first, with a status and MPI_GET_COUNT.
      do i = 1, nv
         ibuf(i) = me * i
         jbuf(i) = -1
      end do
      if (mod(me, 2) .eq. 0) then
         call MPI_SEND(ibuf, nv, MPI_INTEGER, right, 5, MPI_COMM_WORLD,
     &                 ierr)
         call MPI_RECV(jbuf, nv, MPI_INTEGER, MPI_ANY_SOURCE,
     &                 MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
      else
         call MPI_RECV(jbuf, nv, MPI_INTEGER, left, 5,
     &                 MPI_COMM_WORLD, status, ierr)
         call MPI_SEND(ibuf, nv, MPI_INTEGER, right, 5, MPI_COMM_WORLD,
     &                 ierr)
      end if
      call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
      call check(me, 'ring data, status and count',
     &     jbuf(nv) .eq. left * nv .and. status(MPI_SOURCE) .eq. left
     &     .and. status(MPI_TAG) .eq. 5 .and. n .eq. nv)
      call MPI_SENDRECV(ibuf, 2, MPI_INTEGER, left, 6, jbuf, nv,
     &     MPI_INTEGER, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE,
     &     ierr)
      call check(me, 'MPI_SENDRECV, MPI_STATUS_IGNORE',
     &     jbuf(2) .eq. 2 * right)

! Broadcast and reductions.
      d = 0
      if (me .eq. 0) d = 4.25d0
      call MPI_BCAST(d, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &     ierr)
      call check(me, 'MPI_BCAST DOUBLE PRECISION', d .eq. 4.25d0)
      call MPI_ALLREDUCE(me, isum, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call MPI_ALLREDUCE(me, imax, 1, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, ierr)
      call MPI_ALLREDUCE(me, imin, 1, MPI_INTEGER, MPI_MIN,
     &     MPI_COMM_WORLD, ierr)
      if (me .eq. 0) write (*, '(A,3(1X,I0))') '# int:', isum, imax,
     &     imin
      call check(me, 'MPI_ALLREDUCE INTEGER SUM MAX MIN',
     &     isum .eq. np * (np - 1) / 2 .and. imax .eq. np - 1
     &     .and. imin .eq. 0)
      d = 1.0d0 / (me + 1)
      call MPI_ALLREDUCE(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call MPI_ALLREDUCE(d, dmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX,
     &     MPI_COMM_WORLD, ierr)
      call MPI_ALLREDUCE(d, dmin, 1, MPI_DOUBLE_PRECISION, MPI_MIN,
     &     MPI_COMM_WORLD, ierr)
      if (me .eq. 0) write (*, '(A,3(1X,F8.5))') '# double:', dsum,
     &     dmax, dmin
      call check(me, 'MPI_ALLREDUCE DOUBLE PRECISION SUM MAX MIN',
     &     dmax .eq. 1.0d0 .and. dmin .eq. 1.0d0 / np)
      c = cmplx(1.0, me)
      call MPI_ALLREDUCE(c, csum, 1, MPI_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      z = dcmplx(me, 2.0d0)
      call MPI_ALLREDUCE(z, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (me .eq. 0) write (*, '(A,4(1X,F6.1))') '# complex:', csum,
     &     zsum
      call check(me, 'MPI_ALLREDUCE COMPLEX, DOUBLE COMPLEX SUM',
     &     real(csum) .eq. np .and. aimag(zsum) .eq. 2.0d0 * np)
      inpl(1) = 1
      inpl(2) = me
      call MPI_ALLREDUCE(MPI_IN_PLACE, inpl, 2, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, ierr)
      call check(me, 'MPI_ALLREDUCE MPI_IN_PLACE MAX',
     &     inpl(1) .eq. 1 .and. inpl(2) .eq. np - 1)

! A vector type: row 3 of a 3 x NV matrix, to the left neighbour.
      do i = 1, nv
         mat(1, i) = 0
         mat(2, i) = 0
         mat(3, i) = 10 * i + me
      end do
      call MPI_TYPE_VECTOR(nv, 1, 3, MPI_INTEGER, vec, ierr)
      call MPI_TYPE_COMMIT(vec, ierr)
      call MPI_SENDRECV(mat(3, 1), 1, vec, left, 8, row, nv,
     &     MPI_INTEGER, right, 8, MPI_COMM_WORLD, status, ierr)
      call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
      call MPI_TYPE_FREE(vec, ierr)
      call check(me, 'MPI_TYPE_VECTOR row', n .eq. nv .and.
     &     row(1) .eq. 10 + right .and. row(nv) .eq. 10 * nv + right
     &     .and. vec .eq. MPI_DATATYPE_NULL)

! Split into halves.
      call MPI_COMM_SPLIT(MPI_COMM_WORLD, me / 2, me, sub, ierr)
      call MPI_COMM_SIZE(sub, subnp, ierr)
      call MPI_ALLREDUCE(me, isum, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
      call MPI_COMM_FREE(sub, ierr)
      call check(me, 'MPI_COMM_SPLIT halves', sub .eq. MPI_COMM_NULL
     &     .and. isum .eq. 4 * (me / 2) + 1 .or. np .lt. 4)

! Non-blocking exchange with both neighbours.
      call MPI_IRECV(jbuf, 1, MPI_INTEGER, right, 9, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      call MPI_ISEND(me, 1, MPI_INTEGER, left, 9, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_WAITALL(2, reqs, sts, ierr)
      call check(me, 'MPI_ISEND, MPI_IRECV, MPI_WAITALL',
     &     jbuf(1) .eq. right .and. sts(MPI_SOURCE, 1) .eq. right
     &     .and. reqs(1) .eq. MPI_REQUEST_NULL
     &     .and. reqs(2) .eq. MPI_REQUEST_NULL)

      if (me .eq. 0) write (*, '(A,I0,A,I0,A)')
     &     '# fortran f77_mpif: ', nchk, ' checks, ', nbad, ' failed'
      call MPI_FINALIZE(ierr)
      end

! Every rank, collectively: one check, printed by rank 0.
      subroutine check(me, what, good)
      implicit none
      include 'mpif.h'
      integer me
      character*(*) what
      logical good, all
      integer ierr, nchk, nbad
      common /chk/ nchk, nbad
      call MPI_ALLREDUCE(good, all, 1, MPI_LOGICAL, MPI_LAND,
     &     MPI_COMM_WORLD, ierr)
      nchk = nchk + 1
      if (.not. all) nbad = nbad + 1
      if (me .eq. 0 .and. all) write (*, '(A,I0,A,A)') 'ok ', nchk,
     &     ' - ', what
      if (me .eq. 0 .and. .not. all) write (*, '(A,I0,A,A)') 'not ok ',
     &     nchk, ' - ', what
      end
