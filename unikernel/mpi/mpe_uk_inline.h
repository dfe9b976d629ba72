/*
 * mpe_uk_inline.h: the unikernel's definitions of the platform calls every engine
 * operation makes (mpe_plat.h's MPE_PLAT_INLINE; unikernel.mk names this header). Each is
 * a load or two: as calls they were a fifth of the function entries of a same-node
 * message, and under TCG every return is an indirect jump QEMU looks up.
 */
#ifndef UK_MPE_UK_INLINE_H
#define UK_MPE_UK_INLINE_H
#include "pvas/pvas.h"
#include "uk/cpu.h"

struct mpe_node;

/* This node's engine, once the job has one (mpe_uk.c sets it at job start). */
extern struct mpe_node *mpe_uk_node;

/* Any context; see mpe_plat.h. */
static inline struct mpe_node *plat_node(void)
{
    return mpe_uk_node;
}

/* Task context; see mpe_plat.h. */
static inline int plat_rank(void)
{
    struct pvas_task *t = pvas_current();
    return t ? t->rank : -1;
}

/* Any context; see mpe_plat.h. */
static inline int plat_cpu(void)
{
    return cpu_id();
}

/* Task context; see mpe_plat.h: the NIC interrupt makes progress here. */
static inline void plat_poll(void) {}

#endif
