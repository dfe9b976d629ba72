/*
 * ap_boot.S: how an application processor gets from real mode to C.
 *
 * ap_tramp_start..ap_tramp_end is copied to AP_TRAMPOLINE_PHYS (a STARTUP IPI can only
 * start a CPU at a page below 1 MiB, in real mode). It switches to protected mode, loads
 * the boot page tables (which map the trampoline 1:1 and the kernel high), enters long
 * mode and jumps to ap_entry64 in the kernel proper, which switches to the kernel page
 * tables and this CPU's stack. smp.c fills in the parameter block before each start-up
 * and starts one AP at a time, so one copy of the block suffices.
 */
#include "memlayout.h"
#include "arch/x86_64/x86.h"
#include "arch/x86_64/longmode.h"

#define T(x) ((x) - ap_tramp_start + AP_TRAMPOLINE_PHYS)

    .section .rodata
    .p2align 4
    .code16
    .globl ap_tramp_start, ap_tramp_end, ap_tramp_params
ap_tramp_start:
    cli
    cld
    movw %cs, %ax               /* the page's segment: it may lie above 64 KiB (hosted) */
    movw %ax, %ds
    lgdtl tramp_gdt_ptr - ap_tramp_start
    movl %cr0, %eax
    orl $CR0_PE, %eax
    movl %eax, %cr0
    ljmpl $0x18, $T(tramp32)

    .code32
tramp32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    ENTER_LONG_MODE T(p_boot_cr3)
    ljmp $0x08, $T(tramp64)

    .code64
tramp64:
    movq T(p_entry), %rax
    jmp *%rax

    .p2align 3
tramp_gdt:
    .quad 0
    .quad 0x00af9a000000ffff    /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff    /* 0x10: data */
    .quad 0x00cf9a000000ffff    /* 0x18: 32-bit code */
tramp_gdt_ptr:
    .word tramp_gdt_ptr - tramp_gdt - 1
    .long T(tramp_gdt)

    .p2align 3
ap_tramp_params:                /* struct ap_params in smp.c: keep in step */
p_boot_cr3:  .quad 0
p_entry:     .quad 0
p_cr3:       .quad 0
p_stack:     .quad 0
p_cpu:       .quad 0
ap_tramp_end:

/* In the kernel proper (mapped the same in the boot and the kernel page tables). */
    .text
    .globl ap_entry64
ap_entry64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movq T(p_cr3), %rax         /* still reachable: the boot tables map low memory 1:1 */
    movq T(p_stack), %rsp
    movq T(p_cpu), %rdi
    movq %rax, %cr3
    xorl %ebp, %ebp
    fninit
    call ap_main
1:  cli
    hlt
    jmp 1b
