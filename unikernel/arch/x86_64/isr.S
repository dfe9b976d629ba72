/*
 * isr.S: the 256 interrupt entry stubs and the common path.
 *
 * Every stub leaves the same frame (struct trapframe in trap.h): an error code (0 when
 * the CPU pushes none), the vector, then all general registers. The common path also
 * saves the FPU/SSE state with fxsave, because kernel C code (and newlib) uses SSE
 * registers freely and an interrupt must not clobber the interrupted code's.
 */
#define HAS_ERR(n) ((n) == 8 || ((n) >= 10 && (n) <= 14) || (n) == 17 || (n) == 21 || (n) == 29 || (n) == 30)

    .text
    .p2align 4
isr_common:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %r12             /* the trapframe; r12 is callee-saved */
    subq $512, %rsp
    andq $-16, %rsp
    fxsave64 (%rsp)
    movq %r12, %rdi
    cld
    call trap_dispatch
    fxrstor64 (%rsp)
    movq %r12, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp              /* vector, error code */
    iretq

    .altmacro
    .macro STUB n
    .p2align 3
isr_\n:
    .if HAS_ERR(\n) == 0
    pushq $0
    .endif
    pushq $\n
    jmp isr_common
    .endm

    .set i, 0
    .rept 256
    STUB %i
    .set i, i + 1
    .endr

    .macro ENTRY n
    .quad isr_\n
    .endm

    .section .rodata
    .p2align 3
    .globl isr_table
isr_table:
    .set i, 0
    .rept 256
    ENTRY %i
    .set i, i + 1
    .endr
