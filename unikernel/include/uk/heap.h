/* heap.h: the kernel heap region that newlib's malloc grows through sbrk(). */
#ifndef UK_HEAP_H
#define UK_HEAP_H
#include <stdint.h>

/* Task context (callers hold newlib's malloc lock). Grows or shrinks the kernel heap
 * (KHEAP_BASE .. KHEAP_BASE+KHEAP_MAX in memlayout.h) by `incr` bytes, mapping fresh zeroed
 * frames as needed. Returns the previous break, or (void *)-1 when memory is exhausted. */
void *kheap_sbrk(intptr_t incr);

#endif
