# qemu/ukfiles: the host side of a job's output files (qemu/ukrun --output): rebuilds them
# from the nodes' streams. Its parser is fuzzed (tests/fuzz/ukf_fuzz.c).
UKF_SRCS := qemu/ukfiles/ukf_parse.c
UKF_HDRS := qemu/ukfiles/ukf.h unikernel/include/uk/fspath.h
$(B)/host/ukfiles: qemu/ukfiles/ukfiles.c $(UKF_SRCS) $(UKF_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Iunikernel/include -o $@ $< $(UKF_SRCS)
$(B)/fuzz/ukf_fuzz: tests/fuzz/ukf_fuzz.c $(UKF_SRCS) $(UKF_HDRS) tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Iqemu/ukfiles -Iunikernel/include -o $@ $< $(UKF_SRCS)
fuzz: $(B)/fuzz/ukf_fuzz
ALL_TARGETS += $(B)/host/ukfiles $(B)/fuzz/ukf_fuzz
TEST_SUITES += files=tests/files/run.sh
