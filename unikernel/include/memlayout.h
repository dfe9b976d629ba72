/*
 * memlayout.h: every address constant of the unikernel, in one place.
 *
 * Virtual address space (x86_64, 4-level paging, 48-bit):
 *
 *   0x0000000000000000  page 0: never mapped (NULL dereferences fault)
 *   0x0000000000001000  ... unused
 *   0x0000100000000000  PART_BASE: PVAS partitions, PART_SIZE each, PART_MAX of them
 *                       (machine-wide: partition i has the same address in every address
 *                       space, and only the address space that owns it maps it)
 *   0xffff800000000000  DIRECT_MAP_BASE: all physical RAM, phys p at DIRECT_MAP_BASE + p
 *   0xffffc00000000000  KSTACK_BASE: kernel stacks, each with an unmapped guard page below
 *   0xffffc80000000000  KHEAP_BASE: kernel heap (newlib's sbrk), grows up, KHEAP_MAX bytes
 *   0xffffd00000000000  MMIO_BASE: device registers (LAPIC, IOAPIC, PCI BARs), uncached
 *   0xffffffff80000000  KERNEL_VIRT_BASE: the kernel image (-mcmodel=kernel: top 2 GiB)
 *
 * Physical memory used before the frame allocator exists:
 *
 *   0x00000000-0x00000fff  real-mode IVT/BDA: left alone
 *   0x00008000             AP_TRAMPOLINE_PHYS: real-mode start-up code for the APs (one page)
 *   0x00100000             KERNEL_PHYS_BASE: the kernel image (loaded by QEMU / GRUB)
 *
 * This file is included from assembly as well as C: keep it to #defines.
 */
#ifndef UK_MEMLAYOUT_H
#define UK_MEMLAYOUT_H

#define PAGE_SIZE  0x1000
#define PAGE_SHIFT 12
#define HUGE_SIZE  0x200000 /* a 2 MiB page */

#ifndef KERNEL_PHYS_BASE /* a board may link the image elsewhere (boards/hosted) */
#define KERNEL_PHYS_BASE 0x100000
#endif
#define KERNEL_VIRT_BASE 0xffffffff80000000
/* The boot page tables map this much physical memory at KERNEL_VIRT_BASE and 1:1. */
#define BOOT_MAP_SIZE    0x40000000 /* 1 GiB */

#ifndef AP_TRAMPOLINE_PHYS /* a board may move it (boards/hosted: Linux keeps that page) */
#define AP_TRAMPOLINE_PHYS 0x8000
#endif

#define DIRECT_MAP_BASE 0xffff800000000000
#define DIRECT_MAP_MAX  0x0000400000000000 /* 64 TiB of physical address space */

#ifndef MAX_CPUS /* a board may raise it (boards/knl) */
#define MAX_CPUS 64
#endif
/* The largest APIC id the kernel accepts (smp.c's APIC id -> CPU table has one entry per
 * id). 255 fits xAPIC's 8-bit ids; an x2APIC board raises it (boards/knl). */
#ifndef MAX_APIC_ID
#define MAX_APIC_ID 255
#endif

#define KSTACK_BASE     0xffffc00000000000
#define KSTACK_SIZE     0x10000                   /* 64 KiB per kernel stack */
#define KSTACK_SLOT     (KSTACK_SIZE + PAGE_SIZE) /* a stack plus its guard page below it */
/* Each CPU takes KSTACKS_PER_CPU stacks (its scheduler stack and 4 interrupt stacks,
 * smp.c); tasks take the rest. 1024 slots on the qemu board, more with the board's CPUs. */
#define KSTACKS_PER_CPU 5
#define KSTACK_TASKS    704
#define KSTACK_SLOTS    (KSTACK_TASKS + KSTACKS_PER_CPU * MAX_CPUS)

#define KHEAP_BASE 0xffffc80000000000
#define KHEAP_MAX  0x0000000100000000 /* 4 GiB of kernel heap at most */

#define MMIO_BASE 0xffffd00000000000
#define MMIO_MAX  0x0000001000000000

/* PVAS partitions (unikernel/pvas/). The board may shrink PART_SIZE (e.g. for a small
 * guest) but not below what one rank needs. Layout inside partition i, from its base:
 *   [0, PART_GUARD)                         unmapped: catches overruns from partition i-1
 *   PART_IMAGE_OFF                          the ELF image (text shared between tasks of
 *                                           the same image, data/bss private), then heap
 *   ... heap grows up to the lower stack guard ...
 *   [top - 2*PART_GUARD - PART_STACK_SIZE, top)  guard, stack (mapped at spawn), guard */
#ifndef PART_SIZE
#define PART_SIZE 0x1000000000 /* 64 GiB, as in the PVAS paper */
#endif
#define PART_BASE       0x0000100000000000
#define PART_MAX        256
#define PART_GUARD      0x200000 /* 2 MiB of unmapped guard */
#define PART_IMAGE_OFF  PART_GUARD
#define PART_STACK_SIZE 0x100000 /* 1 MiB stack per task, mapped and zeroed at spawn */

/* Where MSI / MSI-X messages are written to reach a local APIC (destination APIC id in
 * bits 19:12): the x86 interrupt address window, not RAM. */
#define MSI_ADDR_BASE 0xfee00000u

#ifndef __ASSEMBLER__
#define P2V(p)      ((void *)((unsigned long)(p) + DIRECT_MAP_BASE))
#define V2P(v)      ((unsigned long)(v)-DIRECT_MAP_BASE)
/* The kernel image's own symbols live at KERNEL_VIRT_BASE, not in the direct map. */
#define KIMG_V2P(v) ((unsigned long)(v)-KERNEL_VIRT_BASE)
#endif

#endif
