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
 *   UKL_VNIC_OFF     the virtual NIC: struct ukl_vnic, then its two rings of frame slots
 *   UKL_KERNEL_OFF   the unikernel image (its ELF's physical addresses start here)
 * Everything below UKL_KERNEL_OFF belongs to the loader; the unikernel only writes the
 * struct ukl_shm, the console ring and its own side of the virtual NIC (below).
 */
#ifndef UKLOAD_SHM_H
#define UKLOAD_SHM_H

#ifdef BOARD_HOSTED /* the unikernel: no Linux headers, the compiler's own types */
#define __u8 __UINT8_TYPE__
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

/*
 * The virtual NIC (ukvnic0 in Linux, ukload_vnic.c; unikernel/drivers/ukvnic.c): two
 * single-producer single-consumer rings of Ethernet frames, to_uk (Linux produces, the
 * unikernel consumes) and to_linux (the reverse). Each ring has UKL_VNIC_SLOTS slots of
 * UKL_VNIC_SLOT_SIZE bytes: a length, then the frame (no FCS, at most UKL_VNIC_FRAME_MAX).
 * The indices are free-running u32 counts of frames (slot = index & (UKL_VNIC_SLOTS - 1));
 * prod - cons (mod 2^32) is the number of full slots, never above UKL_VNIC_SLOTS.
 *
 * Who writes what: the producer writes the free slots and `prod`; the consumer writes
 * `cons` and `kick`; the loader writes the rest before the unikernel starts. Each side
 * keeps its own index in a private variable and never reads it back from shared memory;
 * the other side's index is read once per pass into a local and checked (prod - cons <=
 * UKL_VNIC_SLOTS), and every length read from a slot is copied to a local and checked
 * (UKL_VNIC_FRAME_MIN..UKL_VNIC_FRAME_MAX) before it sizes a copy: the peer may be buggy,
 * and shared memory may change under the reader.
 *
 * Memory order (x86 is TSO, but both sides use the language's orders, not x86's):
 * - producer: the frame and its length, then `prod` with a release store; consumer: `prod`
 *   with an acquire load, then the slot. So a slot is never read before it is written.
 * - consumer: the slot copied out, then `cons` with a release store; producer: `cons` with
 *   an acquire load before it writes into the slots that frees. So a slot is never
 *   overwritten while it is read.
 * - sleeping (to_uk only: the unikernel halts between interrupts): the consumer, finding
 *   the ring empty, stores kick = 1, then a FULL fence, then loads `prod` again; the
 *   producer stores `prod`, then a FULL fence, then loads `kick` and sends the IPI
 *   (UKL_VNIC_VECTOR to the unikernel's first CPU) if it is set. Both are store->load
 *   pairs, the one order TSO reorders: without either fence the producer can read the old
 *   kick = 0 while the consumer reads the old `prod`, and the frame waits for the
 *   unikernel's next network timer tick (10 ms) instead of an IPI. The consumer stores
 *   kick = 0 when it starts draining, so a busy consumer gets no IPIs.
 * - to_linux: Linux polls it from a timer (ukload_vnic.c). With linux_vector set (the
 *   module's vnic_ipi), Linux's NAPI sleeps the same way on to_linux's kick, and the
 *   unikernel sends linux_vector to the CPU of APIC id linux_apic after publishing
 *   (the same two fences); the timer then only backs it up. linux_vector 0: no IPIs.
 */
#define UKL_VNIC_OFF 0x40000	  /* after UKL_BOOT_OFF + UKL_BOOT_SIZE, page aligned */
#define UKL_VNIC_MAGIC 0x4e564b55 /* "UKVN": set by the loader when the rings are ready */
#define UKL_VNIC_SLOTS 256	  /* per ring, a power of two */
#define UKL_VNIC_SLOT_SIZE 2048	  /* the length word, padding, then the frame */
#define UKL_VNIC_SLOT_HDR 16	  /* the frame's offset in its slot */
#define UKL_VNIC_FRAME_MIN 14	  /* an Ethernet header */
#define UKL_VNIC_FRAME_MAX 1514	  /* the header + an MTU of 1500 */
#define UKL_VNIC_VECTOR 0x60	  /* the unikernel's NIC vector (VEC_VNET_RX) */
#define UKL_VNIC_LINE 64	  /* a cache line: each index on its own */
#define UKL_VNIC_CTL_SIZE 0x1000  /* struct ukl_vnic, then the rings */
#define UKL_VNIC_RING_SIZE (UKL_VNIC_SLOTS * UKL_VNIC_SLOT_SIZE)
#define UKL_VNIC_TO_UK_OFF (UKL_VNIC_OFF + UKL_VNIC_CTL_SIZE)
#define UKL_VNIC_TO_LINUX_OFF (UKL_VNIC_TO_UK_OFF + UKL_VNIC_RING_SIZE)
#define UKL_VNIC_END (UKL_VNIC_TO_LINUX_OFF + UKL_VNIC_RING_SIZE)
#define UKL_VNIC_MAC_LEN 6

/* One ring's indices: the producer's line, then the consumer's. */
struct ukl_vnic_ring {
	__u32 prod; /* frames ever published; the producer's */
	__u32 prod_pad[UKL_VNIC_LINE / 4 - 1];
	__u32 cons; /* frames ever consumed; the consumer's */
	__u32 kick; /* the consumer's: 1 = it may be asleep, notify after publishing */
	__u32 cons_pad[UKL_VNIC_LINE / 4 - 2];
};

/* At UKL_VNIC_OFF. The first line is the loader's, written before the unikernel starts. */
struct ukl_vnic {
	__u32 magic;			  /* UKL_VNIC_MAGIC */
	__u32 slots;			  /* UKL_VNIC_SLOTS: both sides check it */
	__u8 uk_mac[UKL_VNIC_MAC_LEN];	  /* the unikernel's address */
	__u8 linux_mac[UKL_VNIC_MAC_LEN]; /* ukvnic0's */
	__u32 linux_vector;		  /* to_linux's notification vector, 0: none */
	__u32 linux_apic;		  /* ... sent to this APIC id */
	__u32 line_pad[UKL_VNIC_LINE / 4 - 7];
	struct ukl_vnic_ring to_uk;
	struct ukl_vnic_ring to_linux;
};

/* A slot: the frame's length in bytes, then the frame at UKL_VNIC_SLOT_HDR. */
struct ukl_vnic_slot {
	__u32 len;
	__u32 pad[UKL_VNIC_SLOT_HDR / 4 - 1];
	__u8 frame[UKL_VNIC_SLOT_SIZE - UKL_VNIC_SLOT_HDR];
};

#endif
