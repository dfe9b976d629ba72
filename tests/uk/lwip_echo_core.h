/*
 * lwip_echo_core.h: a TCP echo over lwIP's loopback netif, shared by the host unit test
 * (tests/unit/lwip/) and the in-kernel test (lwip_echo.c), so both prove the same thing
 * with the same lwipopts.h.
 */
#ifndef LWIP_ECHO_CORE_H
#define LWIP_ECHO_CORE_H
#include <stddef.h>
#include <stdint.h>

struct lwip_echo_result {
    size_t sent;       /* bytes the client sent */
    size_t echoed;     /* bytes the client got back */
    uint32_t sent_sum; /* checksum of what was sent */
    uint32_t echo_sum; /* checksum of what came back */
    uint32_t peer_wnd; /* largest send window the client saw (> 64 KiB: scaling works) */
    int closed;        /* 1 if both sides saw the other's FIN and closed without error */
    const char *error; /* NULL on success, else what went wrong */
};

/* Task context, lwIP lock NOT held (it takes and drops it around each step). Calls
 * lwip_port_init(), listens on 127.0.0.1:port, connects, sends `total` bytes in chunks of
 * varying size, has the server echo them, closes both ends and polls until everything is
 * closed or `timeout_ms` passed. Returns 0 if every byte came back intact and the
 * connection closed cleanly; *res says what happened either way. */
int lwip_echo_run(size_t total, uint16_t port, uint32_t timeout_ms, struct lwip_echo_result *res);

#endif
