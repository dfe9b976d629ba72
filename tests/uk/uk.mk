# Tests that boot the unikernel (tests/uk/run.sh; cases in tests/uk/cases/), and the
# applications they run (tests/uk/apps/*.c, built with ukmpicc into $(B)/apps/).
UK_APPS := $(patsubst tests/uk/apps/%.c,$(B)/apps/%,$(wildcard tests/uk/apps/*.c))

$(B)/apps/%: tests/uk/apps/%.c $(APP_CONF) mpi/bin/ukmpicc
	@mkdir -p $(@D)
	mpi/bin/ukmpicc -O2 -g $(WARN) $(WERROR) -Impi/core $< -o $@ $(LDLIBS_$*)

# Per-application link flags: posix.c is linked as a Linux program would be, with -lm.
LDLIBS_posix := -lm

# The same images inside the test kernel, for in-kernel tests (ktest_apps.h).
$(B)/uk/apps_blob.S: $(UK_APPS) tests/uk/uk.mk
	@{ echo '	.section .rodata'; echo '	.p2align 4'; echo '	.globl ktest_apps'; \
	   echo 'ktest_apps:'; \
	   for a in $(notdir $(UK_APPS)); do echo "	.quad n_$$a, s_$$a, e_$$a"; done; \
	   echo '	.quad 0, 0, 0'; \
	   for a in $(notdir $(UK_APPS)); do echo "n_$$a: .asciz \"$$a\""; done; \
	   for a in $(notdir $(UK_APPS)); do \
	     echo '	.p2align 4'; echo "s_$$a: .incbin \"$(B)/apps/$$a\""; echo "e_$$a:"; done; \
	 } > $@

$(B)/uk/apps_blob.o: $(B)/uk/apps_blob.S
	$(CC) -c $< -o $@

ALL_TARGETS += $(UK_APPS)
TEST_SUITES += uk=tests/uk/run.sh

# Crafted application images (tests/fuzz/pvas_images.c: a valid one and variants broken
# one way each) in $(B)/loader/elf/, run by the loader_*.case files (key `file:`); the same
# tool writes initrd archives to $(B)/loader/cpio/. Both seed the fuzz targets.
$(B)/fuzz/pvas-images: tests/fuzz/pvas_images.c unikernel/include/uk/abi.h | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Iunikernel/include -o $@ $<
$(B)/loader/images.stamp: $(B)/fuzz/pvas-images
	rm -rf $(B)/loader && mkdir -p $(B)/loader/elf $(B)/loader/cpio
	$< $(B)/loader/elf && $< --cpio $(B)/loader/cpio && touch $@

ALL_TARGETS += $(B)/loader/images.stamp
