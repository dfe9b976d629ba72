/* demo.h: what the job kernel does when no job is given (until the MPI launcher exists). */
#ifndef UK_DEMO_H
#define UK_DEMO_H

/* Boot CPU, task context. Shows the machine at work; returns the exit code. */
int demo_run(void);

#endif
