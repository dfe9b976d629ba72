/*
 * ukapp.h: what an application can ask the unikernel directly (beyond POSIX through
 * newlib): where it runs, and its partition. MPI programs do not need it; tests and
 * tools do. Included by ukmpicc's default include path.
 */
#ifndef UKAPP_H
#define UKAPP_H
#include <stdint.h>
#include <uk/abi.h>

extern const struct uk_abi *uk_abi;

static inline int uk_rank(void)
{
    return uk_abi->rank();
}
static inline int uk_size(void)
{
    return uk_abi->job_size();
}
static inline int uk_cpu(void)
{
    return uk_abi->cpu();
}
static inline void uk_yield(void)
{
    uk_abi->yield();
}
static inline void uk_partition(uint64_t *base, uint64_t *size)
{
    uk_abi->partition(base, size);
}
/* The address `p` (in this task's partition) has in `rank`'s partition, or NULL if that
 * rank is not on this node. Same image, same offsets: a global's peer copy. */
static inline void *uk_peer_addr(int rank, const void *p)
{
    uint64_t mine, size, theirs = uk_abi->peer_base(rank);
    uk_abi->partition(&mine, &size);
    return theirs ? (void *)(theirs + ((uint64_t)p - mine)) : (void *)0;
}

#endif
