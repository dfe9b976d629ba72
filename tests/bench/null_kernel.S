/*
 * null_kernel.S: the smallest PVH kernel: it exits through isa-debug-exit at its first
 * instruction. Booting it measures what QEMU, the firmware and the PVH loader cost on their
 * own, the baseline for our kernel's boot time (tests/bench/run.sh).
 */
    .pushsection .note.Xen, "a", @note
    .p2align 2
    .long 4, 4, 18          /* namesz, descsz, XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .long start
    .popsection

    .text
    .code32
    .globl start
start:
    movw $0xf4, %dx
    xorl %eax, %eax
    outl %eax, %dx
1:  hlt
    jmp 1b
