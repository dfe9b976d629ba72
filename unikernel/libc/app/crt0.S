/*
 * crt0.S: where an application starts. The kernel (pvas_abi.c) calls
 *     _start(const struct uk_abi *abi, int argc, char **argv, char **envp)
 * on the task's own stack, already in its partition; relocations are already applied.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp             /* the outermost frame: ends backtraces */
    andq $-16, %rsp
    call uk_app_start
    ud2
    .size _start, . - _start
    .section .note.GNU-stack, "", @progbits
