/*
 * libc_mem.c: the heap under newlib's malloc.
 *
 * newlib's malloc is dlmalloc over sbrk(). It calls sbrk with its malloc lock held
 * (__lock___malloc_recursive_mutex, libc_lock.c), which is the serialisation
 * kheap_sbrk() relies on. It may pass a negative increment to give memory back.
 */
#include <errno.h>
#include <unistd.h>
#include <malloc.h>
#include <stdlib.h>
#include <uk/heap.h>

/* Task context, under newlib's malloc lock; returns the old break or (void *)-1. */
void *sbrk(ptrdiff_t incr)
{
    void *p = kheap_sbrk(incr);

    if (p == (void *)-1)
        errno = ENOMEM;
    return p;
}

/* Task context. newlib 3.3 references posix_memalign (from aligned_alloc-style callers)
 * without providing it; memalign is its own dlmalloc entry point. */
int posix_memalign(void **out, size_t align, size_t size)
{
    void *p;

    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    p = memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
