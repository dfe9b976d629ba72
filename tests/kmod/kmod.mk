# tests/kmod: the kernel-module tests, in a Debian guest under QEMU/TCG (run.sh).
TEST_SUITES += kmod=tests/kmod/run.sh
# host-kmod/kacc: its own guest (tests/kmod/run.sh kacc runs the same)
TEST_SUITES += kacc=tests/kmod/kacc.sh
# the Linux library's MPI_I* collectives through kacc (tests/kmod/run.sh kacc-mpi)
TEST_SUITES += kacc-mpi=tests/kmod/kacc_mpi.sh
# host-kmod/ukload: its own guest, 4 CPUs (tests/kmod/run.sh ukload runs the same)
TEST_SUITES += ukload=tests/kmod/ukload.sh
