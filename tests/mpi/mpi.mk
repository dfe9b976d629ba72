# The MPI conformance suite: tests/mpi/progs/*.c built with Debian's mpicc and run under
# Open MPI (the reference output), then built with mpi/bin/ukmpicc and run under
# qemu/ukrun on 1x4, 2x2 and 4x2 nodes x ranks; the outputs must be identical. The
# programs are built by tests/mpi/run.sh itself (into $(B)/mpi-ref and $(B)/mpi-uk).
TEST_SUITES += mpi=tests/mpi/run.sh
# The same programs on the library's Linux home (mpi/linux/): built with `ukmpicc
# --linux`, run as 4 and 8 Linux processes over loopback by mpi/bin/ukmpirun, compared
# with the same Open MPI references (made here when missing or stale). After the `mpi`
# suite, which makes the references.
TEST_SUITES += mpi-linux="tests/mpi/run.sh --linux-only"
# The Linux platform under load and when it breaks: a stress test, ranks dying mid-job,
# bad environments, and the stress test failing on deliberately broken platforms.
TEST_SUITES += mpi-linux-faults=tests/mpi/linux_faults.sh
# Mixed jobs: a unikernel node and a Linux process (the Linux build) as the two nodes of
# one job, on the same hub through a TAP device in a network namespace (needs root).
TEST_SUITES += mpi-mixed=tests/mpi/linux_mixed.sh

# MPICH's own test suite (tests/mpich/run.sh; its sources fetched by mk/deps.d/35-*):
# make test runs the subset tests/mpich/subset, `make test-full` every test.
TEST_SUITES += mpich=tests/mpich/run.sh
