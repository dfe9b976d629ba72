/* lwip_host_test.c: lwIP with the unikernel's lwipopts.h, on the host: TCP echo over the
 * loopback netif (tests/uk/lwip_echo_core.c), before any kernel boots. */
#include <stdio.h>
#include "ut.h"
#include "lwip_echo_core.h"

/* Test thread: 100 KiB echoed, checksums equal, both ends closed cleanly. */
UT_TEST(lwip_loopback_tcp_echo)
{
    struct lwip_echo_result r;
    int rc = lwip_echo_run(100 * 1024, 7001, 10000, &r);

    printf("lwip echo: sent %zu echoed %zu sums %08x/%08x window %u closed %d error %s\n", r.sent,
           r.echoed, (unsigned)r.sent_sum, (unsigned)r.echo_sum, (unsigned)r.peer_wnd, r.closed,
           r.error ? r.error : "none");
    UT_EQ(rc, 0);
    UT_EQ(r.echoed, 100 * 1024);
    UT_EQ(r.sent_sum, r.echo_sum);
    UT_ASSERT(r.closed);
    /* Window scaling negotiated over loopback: the peer's window exceeds 16 bits. */
    UT_ASSERT(r.peer_wnd > 65535);
}

/* Test thread: a second run on another port (pcbs of the first were released) with a
 * size that is not a multiple of anything, larger than one send buffer. */
UT_TEST(lwip_loopback_tcp_echo_again)
{
    struct lwip_echo_result r;
    int rc = lwip_echo_run(1000003, 7002, 20000, &r);

    printf("lwip echo 2: sent %zu echoed %zu closed %d error %s\n", r.sent, r.echoed, r.closed,
           r.error ? r.error : "none");
    UT_EQ(rc, 0);
    UT_EQ(r.echoed, 1000003);
    UT_ASSERT(r.closed);
}
