# Open MPI from Debian: the reference MPI the conformance programs are checked against
# (tests/mpi: the same sources built with Debian's mpicc and with ukmpicc must print the
# same output) and the baseline of the MPI benchmarks.
PKGS+=(openmpi-bin libopenmpi-dev)
