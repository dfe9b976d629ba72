# tests/kmod: the kernel-module tests, in a Debian guest under QEMU/TCG (run.sh).
TEST_SUITES += kmod=tests/kmod/run.sh
# host-kmod/kacc: its own guest (tests/kmod/run.sh kacc runs the same)
TEST_SUITES += kacc=tests/kmod/kacc.sh
# host-kmod/ukload: its own guest, 4 CPUs (tests/kmod/run.sh ukload runs the same)
TEST_SUITES += ukload=tests/kmod/ukload.sh
