/* job_mem.h: the job's memory placement on a NUMA machine, reported (job.c). */
#ifndef UK_JOB_MEM_H
#define UK_JOB_MEM_H
#include "pvas/pvas.h"

/* Task context (job_run), before the ranks start: the policy, one line. Silent without an
 * SRAT, as every policy is then the same (one node). */
void job_mem_start(enum mempol p);
/* Task context (job_run): rank `t` has started; remember it for the report at the end. */
void job_mem_spawned(struct pvas_task *t);
/* Task context (job_run), every rank exited, its address space not yet destroyed: one line
 * per rank of where its heap and stack pages are, read from its page table. */
void job_mem_end(void);

#endif
