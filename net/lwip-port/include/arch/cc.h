/*
 * arch/cc.h: what lwIP needs to know about the compiler and platform.
 *
 * Two builds share it: the unikernel (default: newlib headers, kprintf, machine_exit) and
 * the host unit test (-DLWIP_PORT_HOST: glibc, stderr, abort).
 */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <stdint.h>
#include <stddef.h>
/* lwIP's sys.h needs sys_prot_t even with NO_SYS=1, where it does not include
 * sys_arch.h itself. */
#include "arch/sys_arch.h"

/* x86_64 is little endian (lwIP's arch.h picks its byte-swap code from this). */
#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif

/* size_t-sized printf formats for lwIP's diagnostics (u32_t etc. come from stdint.h). */
#define LWIP_NO_INTTYPES_H 0

/* Any context (lwIP calls it under its lock, often from the NIC interrupt). */
uint32_t lwip_port_rand(void);
#define LWIP_RAND() lwip_port_rand()

#ifdef LWIP_PORT_HOST
#include <stdio.h>
#include <stdlib.h>
#define LWIP_PLATFORM_DIAG(x)                                                                      \
    do {                                                                                           \
        printf x;                                                                                  \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x)                                                                    \
    do {                                                                                           \
        fprintf(stderr, "lwip assert: %s at %s:%d\n", (x), __FILE__, __LINE__);                    \
        abort();                                                                                   \
    } while (0)
#else
#include <uk/console.h>
#include <uk/power.h>
/* Diagnostics use kprintf, never newlib's printf: they can fire in interrupt context. */
#define LWIP_PLATFORM_DIAG(x)                                                                      \
    do {                                                                                           \
        kprintf x;                                                                                 \
    } while (0)
/* A failed lwIP assertion means corrupted network state: stop the job with exit code 3. */
#define LWIP_PLATFORM_ASSERT(x)                                                                    \
    do {                                                                                           \
        kprintf("lwip assert: %s at %s:%d\n", (x), __FILE__, __LINE__);                            \
        machine_exit(3);                                                                           \
    } while (0)
#endif

#endif
