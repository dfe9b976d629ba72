/*
 * longmode.h: the one way into long mode, for both 32-bit entry paths (boot.S for the boot
 * CPU, ap_boot.S for the others). Assembly only. The caller is in 32-bit protected mode
 * with paging off; `cr3` is an operand giving the physical address of a top-level table
 * that maps the code that runs next. Afterwards paging is on, long mode is active (in a
 * 32-bit compatibility segment until the caller's far jump to a 64-bit one), SSE is
 * usable, NX is enabled, and CR0.WP makes read-only pages read-only for ring 0 too.
 */
/* Assembly, not C: */
/* clang-format off */
#ifndef UK_LONGMODE_H
#define UK_LONGMODE_H

    .macro ENTER_LONG_MODE cr3
    movl %cr4, %eax
    orl $(CR4_PAE | CR4_PGE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
    movl %eax, %cr4
    movl \cr3, %eax
    movl %eax, %cr3
    movl $MSR_EFER, %ecx
    rdmsr
    orl $(EFER_LME | EFER_NXE), %eax
    wrmsr
    movl %cr0, %eax
    andl $~(CR0_EM | CR0_CD | CR0_NW), %eax
    orl $(CR0_PG | CR0_PE | CR0_MP | CR0_WP | CR0_NE), %eax
    movl %eax, %cr0
    .endm

/* clang-format on */
#endif
