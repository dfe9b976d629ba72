# MPICH from Debian (mpich, libmpich-dev): the second TCP baseline of the Linux-build
# benchmarks (tests/bench/linux.bench.sh). The benchmark is compiled on the host with
# mpicc.mpich and run by MPICH's mpiexec.hydra in the Debian guests of tests/bench/ompi/
# (their image installs the mpich runtime). Open MPI keeps the mpicc/mpirun alternatives:
# Debian gives MPICH's the lower priority (40 against 50) on amd64.
PKGS+=(libmpich-dev)
