/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ukload_tramp.S: the real-mode start-up code of the unikernel's first CPU, as data.
 *
 * ukload_boot.c copies it into the reserved low page and fills in the four patch fields;
 * the start-up IPI then starts the CPU here in real mode with CS = page >> 4, IP = 0. It
 * switches to flat 32-bit protected mode, paging off, and jumps to the image's PVH entry
 * with %ebx = the start_info: the state the PVH boot protocol promises. It lives in
 * .rodata: the kernel never executes it, only copies it.
 */
	.section .rodata, "a"
	.balign 16
	.globl ukl_tramp_start, ukl_tramp_end, ukl_tramp_gdt_base, ukl_tramp_pm32_ptr
	.globl ukl_tramp_entry, ukl_tramp_start_info, ukl_tramp_gdt, ukl_tramp_pm32

	.code16
ukl_tramp_start:
	cli
	cld
	movw	%cs, %ax
	movw	%ax, %ds
	lgdtl	ukl_tramp_gdt_desc - ukl_tramp_start
	movl	ukl_tramp_entry - ukl_tramp_start, %esi
	movl	ukl_tramp_start_info - ukl_tramp_start, %ebx
	movl	%cr0, %eax
	orl	$1, %eax			/* CR0.PE */
	movl	%eax, %cr0
	ljmpl	*(ukl_tramp_pm32_ptr - ukl_tramp_start)

	.code32
ukl_tramp_pm32:
	movw	$0x10, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	movw	%ax, %fs
	movw	%ax, %gs
	jmp	*%esi

	.balign 8
ukl_tramp_gdt:
	.quad	0
	.quad	0x00cf9a000000ffff		/* 0x08: flat 32-bit code */
	.quad	0x00cf92000000ffff		/* 0x10: flat data */
ukl_tramp_gdt_desc:
	.word	ukl_tramp_gdt_desc - ukl_tramp_gdt - 1
ukl_tramp_gdt_base:
	.long	0	/* patched: physical address of ukl_tramp_gdt */
ukl_tramp_pm32_ptr:
	.long	0	/* patched: physical address of ukl_tramp_pm32 */
	.word	0x08
ukl_tramp_entry:
	.long	0	/* patched: the image's PVH entry */
ukl_tramp_start_info:
	.long	0	/* patched: physical address of the start_info */
ukl_tramp_end:
