/* kstack.h: kernel stacks, each with an unmapped guard page below it (memlayout.h). */
#ifndef UK_KSTACK_H
#define UK_KSTACK_H
#include <stdint.h>

/* Any context but interrupts. The top of a fresh KSTACK_SIZE stack, or 0. Stacks are never
 * freed (kstack.c says why). */
uint64_t kstack_alloc(void);

/* Boot only: continue on `top` by calling fn(); never returns. */
void stack_switch(uint64_t top, void (*fn)(void)) __attribute__((noreturn));

#endif
