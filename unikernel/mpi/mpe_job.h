/* mpe_job.h: starting and ending the MPI engine of a job on this node (mpe_uk.c). */
#ifndef UK_MPE_JOB_H
#define UK_MPE_JOB_H

struct pvas_as;
struct impi_uk_cfg;

/* Task context, before the ranks start: the engine for ranks first..first+count-1 of a
 * job of `size` ranks on `nodes` nodes, this being `node`; with several nodes, listen for
 * the higher-numbered nodes and connect to the lower-numbered ones (retrying while they
 * boot). With impi->on, join that IMPI job (impi_uk.h). *wfirst and *wsize: the world
 * rank of the job's rank 0 and MPI_COMM_WORLD's size (0 and size outside IMPI). 0, or -1
 * after printing why. */
int mpe_job_start(struct pvas_as *as, int node, int nodes, int size, int first, int count,
                  const struct impi_uk_cfg *impi, int *wfirst, int *wsize);
/* Task context, after every local rank ended with 0: BYE to every node, wait for theirs
 * and for our data to be acknowledged; FINI to every IMPI host. 0, or -1 after printing
 * why. */
int mpe_job_end(void);

#endif
