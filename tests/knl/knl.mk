# The knl board's suite (tests/knl/run.sh): x2APIC boots on 4 to 288 CPUs under the
# backports QEMU 10, the qemu board's xAPIC beside it, and an MPI program on a knl node.
# It builds the knl board itself (make BOARD=knl, into build/knl/). Its kernel tests
# (tests/knl/*.c) are in every test image (unikernel.mk's UK_TEST_SRCS).
TEST_SUITES += knl=tests/knl/run.sh
