/*
 * boot.S: from the loader's 32-bit protected mode to 64-bit C code.
 *
 * Two ways in, one path after:
 *   pvh_start  QEMU `-kernel` (PVH: %ebx = physical address of struct hvm_start_info),
 *              announced by the XEN_ELFNOTE_PHYS32_ENTRY note below;
 *   mb_start   Multiboot1 and Multiboot2 loaders such as GRUB (%eax = 0x2BADB002 or
 *              0x36d76289, %ebx = info), used by the image that links multiboot.S in front
 *              (ukernel-mb.bin); bootinfo.c tells the two apart by the magic.
 *
 * Both run with paging off, at the physical addresses this section is linked at. We build
 * the boot page tables (identity 0..4 GiB and the kernel's top-2-GiB alias of 0..2 GiB,
 * all 2 MiB pages), enter long mode and jump to the kernel's high addresses. The C code
 * then builds the real page tables (kernel/vmm.c) and drops the identity map; the
 * application processors reuse these boot tables on their way up (arch/x86_64/ap_boot.S).
 */
#include "memlayout.h"
#include "arch/x86_64/x86.h"
#include "arch/x86_64/longmode.h"

#define BOOT_KIND_PVH 1
#define BOOT_KIND_MB  2

/* ---- PVH entry note (type 18 = XEN_ELFNOTE_PHYS32_ENTRY) ---- */
    .pushsection .note.Xen, "a", @note
    .p2align 2
    .long 4f - 3f       /* namesz */
    .long 6f - 5f       /* descsz */
    .long 18            /* type */
3:  .asciz "Xen"
4:  .p2align 2
5:  .long pvh_start
6:  .p2align 2
    .popsection

    .section .boot.text, "ax"
    .code32
    .globl pvh_start
pvh_start:
    cli
    cld
    movl $BOOT_KIND_PVH, boot_kind
    movl %ebx, boot_info_phys
    jmp common32

    .globl mb_start
mb_start:
    cli
    cld
    movl $BOOT_KIND_MB, boot_kind
    movl %ebx, boot_info_phys
    movl %eax, boot_mb_magic

common32:
    movl $boot_stack32_top, %esp

    /* Long mode available? (CPUID 0x80000001 EDX bit 29). If not, there is nothing we can
     * print yet except on the serial port, so write a fixed message and stop. */
    movl $0x80000000, %eax
    cpuid
    cmpl $0x80000001, %eax
    jb no_long_mode
    movl $0x80000001, %eax
    cpuid
    testl $(1 << 29), %edx
    jz no_long_mode

    /* Boot page tables. boot_pd[0..3] map 0..4 GiB with 2 MiB pages. */
    movl $boot_pd, %edi
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax                    /* low 32 bits of the physical address */
    orl $(PTE_P | PTE_W | PTE_PS), %eax
    movl %eax, (%edi, %ecx, 8)
    movl %ecx, %eax
    shrl $11, %eax                    /* high bits: (i << 21) >> 32 */
    movl %eax, 4(%edi, %ecx, 8)
    incl %ecx
    cmpl $2048, %ecx
    jb 1b

    /* PDPT for the identity map: 4 entries, one per GiB. */
    movl $boot_pdpt_low, %edi
    movl $boot_pd, %eax
    orl $(PTE_P | PTE_W), %eax
    xorl %ecx, %ecx
2:  movl %eax, (%edi, %ecx, 8)
    addl $4096, %eax
    incl %ecx
    cmpl $4, %ecx
    jb 2b

    /* PDPT for the top 2 GiB: entries 510 and 511 alias physical 0..2 GiB. */
    movl $boot_pdpt_high, %edi
    movl $boot_pd, %eax
    orl $(PTE_P | PTE_W), %eax
    movl %eax, 510*8(%edi)
    addl $4096, %eax
    movl %eax, 511*8(%edi)

    movl $boot_pml4, %edi
    movl $boot_pdpt_low, %eax
    orl $(PTE_P | PTE_W), %eax
    movl %eax, (%edi)
    movl $boot_pdpt_high, %eax
    orl $(PTE_P | PTE_W), %eax
    movl %eax, 511*8(%edi)

    ENTER_LONG_MODE $boot_pml4

    lgdt boot_gdt_ptr
    ljmp $0x08, $long_low

no_long_mode:
    movl $msg_no_lm, %esi
3:  lodsb
    testb %al, %al
    jz 4f
    movw $0x3f8, %dx
    outb %al, %dx
    jmp 3b
4:  hlt
    jmp 4b

    .code64
long_low:
    movabs $long_high, %rax
    jmp *%rax

    .section .boot.data, "aw"
    .p2align 12
    .globl boot_pml4
boot_pml4:      .fill 512, 8, 0
boot_pdpt_low:  .fill 512, 8, 0
boot_pdpt_high: .fill 512, 8, 0
boot_pd:        .fill 4*512, 8, 0
boot_stack32:   .fill 1024, 1, 0
boot_stack32_top:

    .p2align 3
    .globl boot_gdt, boot_gdt_ptr
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff    /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff    /* 0x10: data */
    .quad 0x00cf9a000000ffff    /* 0x18: 32-bit code (AP trampoline) */
boot_gdt_end:
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .quad boot_gdt

    .globl boot_kind, boot_info_phys, boot_mb_magic
boot_kind:      .long 0
boot_info_phys: .long 0
boot_mb_magic:  .long 0
msg_no_lm:      .asciz "ukmpi: this CPU has no long mode\r\n"

/* ---- 64-bit, high addresses from here on ---- */
    .text
long_high:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabs $boot_stack_top, %rsp
    xorl %ebp, %ebp             /* ends backtraces */
    fninit
    movl boot_kind, %edi
    movl boot_info_phys, %esi
    movl boot_mb_magic, %edx
    call kmain
1:  cli
    hlt
    jmp 1b

    .bss
    .p2align 12
boot_stack:
    .fill 65536, 1, 0
    .globl boot_stack_top
boot_stack_top:
