/* job_place.h: where the job's ranks run (CPU, core) and where their memory is (NUMA
 * node), reported on machines where that says something: SMT cores or an SRAT (job.c). */
#ifndef UK_JOB_PLACE_H
#define UK_JOB_PLACE_H
#include "pvas/pvas.h"

/* Task context (job_run), before the ranks start: the policy, one line. Silent without an
 * SRAT, as every policy is then the same (one node). */
void job_place_start(enum mempol p);
/* Task context (job_run): rank `t` has started: one line of its CPU and core (with SMT or
 * NUMA); remember it for the report at the end. */
void job_place_spawned(struct pvas_task *t);
/* Task context (job_run), every rank exited, its address space not yet destroyed: one line
 * per rank of where its heap and stack pages are, read from its page table. */
void job_place_end(void);

#endif
