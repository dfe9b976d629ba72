/* libc_host_start.S: process entry for the libc host test (no glibc crt). */
    .text
    .globl _start
_start:
    xor %ebp, %ebp
    and $-16, %rsp
    call libc_host_main
    hlt
    .section .note.GNU-stack,"",@progbits
