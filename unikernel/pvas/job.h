/*
 * job.h: the MPI job this node runs, described by the initrd (packed by qemu/ukrun):
 * a cpio archive with the application image and `job.conf`, lines of key=value:
 *
 *   image=NAME      the archive member to run (static-PIE, built by ukmpicc)
 *   size=N          ranks in the whole job
 *   nodes=N         nodes of the job (the kernel command line's nodes= wins)
 *   arg=VALUE       argv[1], argv[2], ... in order (repeatable)
 *   env=KEY=VALUE   environment (repeatable); UK_RANK, UK_SIZE, UK_NODE are added
 *
 * Ranks are placed in blocks: node i runs ranks [first, first+count) where the first
 * size % nodes nodes get one rank more. On a node, rank k of the block runs on CPU
 * k % CPUs (one per CPU, pinned; more ranks than CPUs share them by time slices).
 */
#ifndef UK_JOB_H
#define UK_JOB_H

/* Task context. Is there a job in the initrd? */
int job_present(void);
/* Task context. Run it; returns the job's exit code (a failing rank's code, or 0). */
int job_run(void);

#endif
