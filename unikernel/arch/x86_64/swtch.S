/*
 * swtch(uint64_t *save_rsp, uint64_t load_rsp): save the callee-saved state of the running
 * context on its stack, store its rsp in *save_rsp, and continue the context whose rsp is
 * load_rsp. Called with interrupts off (sched.c).
 *
 * Saved: rbx, rbp, r12-r15 (the SysV callee-saved registers), and MXCSR plus the x87
 * control word, which the ABI also makes callee-saved. The XMM registers are caller-saved,
 * and a context switched away inside an interrupt has them in its interrupt frame.
 */
    .text
    .globl swtch, task_first_entry
swtch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

/* Where a new task's first swtch returns to: r12 = its struct task (see task_init_stack). */
task_first_entry:
    movq %r12, %rdi
    xorl %ebp, %ebp
    call task_run_first
    ud2
