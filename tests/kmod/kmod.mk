# tests/kmod: the kernel-module tests, in a Debian guest under QEMU/TCG (run.sh).
TEST_SUITES += kmod=tests/kmod/run.sh
TEST_SUITES += kacc=tests/kmod/run.sh kacc
