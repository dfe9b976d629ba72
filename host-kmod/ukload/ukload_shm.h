/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ukload_shm.h: how ukload.ko and a hosted unikernel (boards/hosted) share the reserved
 * physical range. Included by the module, the user tool and the unikernel; fixed-width
 * fields only, little-endian, no pointers.
 *
 * Layout, as offsets from the start of the range (the module's phys_base parameter,
 * which must equal the board's HOSTED_BASE; both are 2 MiB aligned):
 *   UKL_SHM_OFF      struct ukl_shm: the exit word and the console ring's head
 *   UKL_CONS_OFF     the console ring, UKL_CONS_SIZE bytes
 *   UKL_BOOT_OFF     the PVH start_info, then its memory map, then the command line
 *   UKL_KERNEL_OFF   the unikernel image (its ELF's physical addresses start here)
 * Everything below UKL_KERNEL_OFF belongs to the loader; the unikernel only writes the
 * struct ukl_shm and the ring.
 */
#ifndef UKLOAD_SHM_H
#define UKLOAD_SHM_H

#ifdef BOARD_HOSTED /* the unikernel: no Linux headers, the compiler's own types */
#define __u32 __UINT32_TYPE__
#define __u64 __UINT64_TYPE__
#else
#include <linux/types.h>
#endif

#define UKL_SHM_OFF 0x0
#define UKL_CONS_OFF 0x1000
#define UKL_CONS_SIZE 0x10000 /* a power of two: the ring indexes by head & (size - 1) */
#define UKL_BOOT_OFF 0x20000
#define UKL_BOOT_SIZE 0x2000 /* start_info + memory map, then the command line */
#define UKL_CMDLINE_OFF (UKL_BOOT_OFF + 0x1000)
#define UKL_CMDLINE_MAX 0x1000
#define UKL_KERNEL_OFF 0x200000
#define UKL_MAGIC 0x554b4c44 /* "UKLD" */

/* ukl_shm.state: written by the loader before the start-up IPIs, then by the unikernel. */
#define UKL_STATE_BOOTING 1 /* start-up IPIs sent, the unikernel not up yet */
#define UKL_STATE_UP 2	    /* the unikernel's console works */
#define UKL_STATE_EXITED 3  /* exit_code is valid; the CPU halts */

struct ukl_shm {
	__u32 magic;	 /* UKL_MAGIC, set by the loader */
	__u32 state;	 /* UKL_STATE_* */
	__u32 exit_code; /* valid once state is UKL_STATE_EXITED */
	__u32 reserved;
	__u64 cons_head; /* bytes ever written to the ring; the unikernel advances it */
};

#endif
