/* lwip_echo.c: in-kernel test: the loopback TCP echo of lwip_echo_core.c, inside the
 * unikernel (real lwip_lock(): interrupts masked + spinlock; real sys_now()). */
#include <uk/console.h>
#include <uk/ktest.h>
#include "lwip_echo_core.h"

#define LWIP_ECHO_BYTES (100 * 1024)

/* Task context (the ktest runner), interrupts on; lwIP lock not held. */
KTEST(lwip_echo)
{
    struct lwip_echo_result r;
    int rc = lwip_echo_run(LWIP_ECHO_BYTES, 7001, 20000, &r);

    if (rc != 0) {
        kprintf("lwip_echo: FAILED: %s (sent %lu, echoed %lu, closed %d)\n", r.error,
                (unsigned long)r.sent, (unsigned long)r.echoed, r.closed);
        return 1;
    }
    kprintf("lwip_echo: %lu bytes echoed, checksum ok (window %u)\n", (unsigned long)r.echoed,
            (unsigned)r.peer_wnd);
    return 0;
}
