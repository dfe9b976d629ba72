# waitio-gw: the front-end gateway of our WaitIO protocol (net/waitio/README.md),
# built from the WaitIO codec (mpi/waitio/wio_wire.c) and the IMPI programs' Linux helpers
# (net/impi/impi_util.c: logging, addresses, sockets), and its loopback test suite.
WGW_SRCS := net/waitio/wgw_main.c net/waitio/wgw_conn.c net/waitio/wgw_route.c
WGW_DEPS := mpi/waitio/wio_wire.c net/impi/impi_util.c
WGW_HDRS := net/waitio/wgw.h mpi/waitio/wio_wire.h net/impi/impi_util.h
$(B)/waitio/bin/waitio-gw: $(WGW_SRCS) $(WGW_DEPS) $(WGW_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Inet/waitio -Impi/waitio -Inet/impi -Impi/impi -o $@ \
	    $(WGW_SRCS) $(WGW_DEPS)
ALL_TARGETS += $(B)/waitio/bin/waitio-gw
TEST_SUITES += waitio-gw=tests/waitio/gw.sh
