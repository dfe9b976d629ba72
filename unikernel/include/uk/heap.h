/* heap.h: the kernel heap region that newlib's malloc grows through sbrk(). */
#ifndef UK_HEAP_H
#define UK_HEAP_H
#include <stdint.h>

/* Task context (callers hold newlib's malloc lock). Grows or shrinks the kernel heap
 * (KHEAP_BASE .. KHEAP_BASE+KHEAP_MAX in memlayout.h) by `incr` bytes. Memory the break
 * reaches for the first time is fresh zeroed frames; memory given back and reached again
 * keeps the frames and whatever they held (newlib's calloc clears what it hands out, it
 * does not count on sbrk for that). Returns the previous break, or (void *)-1 when memory
 * is exhausted. */
void *kheap_sbrk(intptr_t incr);

#endif
