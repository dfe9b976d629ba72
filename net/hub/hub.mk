# The private L2 network of multi-node jobs (qemu/uknodes): the hub, a Linux program.
# The frame checksum is the RX filter's own (unikernel/drivers/vnet_frame.c, portable C).
$(B)/net/ukhub: net/hub/ukhub.c unikernel/drivers/vnet_frame.c unikernel/drivers/vnet_frame.h | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Iunikernel -o $@ net/hub/ukhub.c unikernel/drivers/vnet_frame.c

ALL_TARGETS += $(B)/net/ukhub
