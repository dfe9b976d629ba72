# The private L2 network of multi-node jobs (qemu/uknodes): the hub, a Linux program.
$(B)/net/ukhub: net/hub/ukhub.c | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -o $@ $<

ALL_TARGETS += $(B)/net/ukhub
