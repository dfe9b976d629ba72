# Networking (PCI, virtio-net, lwIP from the NIC interrupt, ksock, multi-node jobs).
#   build/net/ukhub          the private L2 network of qemu/uknodes (net/hub/)
#   host unit tests          split-ring logic and the RX frame filter (tests/unit/*virtq*, ...)
#   suite uk-net             multi-node tests through qemu/uknodes (tests/uk/net/run.sh)
include net/hub/hub.mk
include net/waitio/waitio-gw.mk
UNIT_SRCS += unikernel/drivers/virtq.c unikernel/drivers/vnet_frame.c
UNIT_INC += -Iunikernel
TEST_SUITES += uk-net=tests/uk/net/run.sh
