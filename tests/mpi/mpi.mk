# The MPI conformance suite: tests/mpi/progs/*.c built with Debian's mpicc and run under
# Open MPI (the reference output), then built with mpi/bin/ukmpicc and run under
# qemu/ukrun on 1x4, 2x2 and 4x2 nodes x ranks; the outputs must be identical. The
# programs are built by tests/mpi/run.sh itself (into $(B)/mpi-ref and $(B)/mpi-uk).
TEST_SUITES += mpi=tests/mpi/run.sh

# MPICH's own test suite (tests/mpich/run.sh; its sources fetched by mk/deps.d/35-*):
# make test runs the subset tests/mpich/subset, `make test-full` every test.
TEST_SUITES += mpich=tests/mpich/run.sh
