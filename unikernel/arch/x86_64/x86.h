/* x86.h: architectural constants (control registers, MSRs, page-table bits). Assembly-safe. */
#ifndef UK_X86_H
#define UK_X86_H

#define CR0_PE (1 << 0)
#define CR0_MP (1 << 1)
#define CR0_EM (1 << 2)
#define CR0_TS (1 << 3)
#define CR0_NE (1 << 5)
#define CR0_WP (1 << 16)
#define CR0_NW (1 << 29)
#define CR0_CD (1 << 30)
#define CR0_PG (1 << 31)

#define CR4_PAE        (1 << 5)
#define CR4_PGE        (1 << 7)
#define CR4_OSFXSR     (1 << 9)
#define CR4_OSXMMEXCPT (1 << 10)

#define MSR_EFER           0xc0000080
#define EFER_LME           (1 << 8)
#define EFER_NXE           (1 << 11)
#define MSR_FS_BASE        0xc0000100
#define MSR_GS_BASE        0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_APIC_BASE      0x1b
#define MSR_TSC_DEADLINE   0x6e0

/* CPUID leaf 0xB: extended topology (x2APIC id in EDX, SMT/core levels per sub-leaf). */
#define CPUID_LEAF_TOPO      0xb
#define CPUID_TOPO_LEVEL_SMT 1 /* leaf 0xB, ECX[15:8]: the level type of a sub-leaf */

#define PTE_P   0x001
#define PTE_W   0x002
#define PTE_U   0x004
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_A   0x020
#define PTE_D   0x040
#define PTE_PS  0x080
#define PTE_G   0x100
#define PTE_NX  0x8000000000000000

/* The page-fault error code (vector VEC_PAGE_FAULT): what the access was. */
#define PF_ERR_PRESENT (1 << 0) /* 1: a protection violation on a present page; 0: not present */
#define PF_ERR_WRITE   (1 << 1) /* 1: a write; 0: a read */
#define PF_ERR_FETCH   (1 << 4) /* 1: an instruction fetch */

#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_TSS0  0x20 /* TSS of CPU i at SEL_TSS0 + 16*i */

#endif
