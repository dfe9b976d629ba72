/*
 * arch/sys_arch.h: lwIP's OS layer for NO_SYS=1: only the lightweight protection type.
 */
#ifndef LWIP_ARCH_SYS_ARCH_H
#define LWIP_ARCH_SYS_ARCH_H
#include <stdint.h>

/* What sys_arch_protect() returns and sys_arch_unprotect() takes: the caller's saved
 * interrupt flags (RFLAGS), restored when the outermost protection ends. */
typedef uint64_t sys_prot_t;

#endif
