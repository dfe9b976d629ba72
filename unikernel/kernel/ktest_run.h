/* ktest_run.h: run the in-kernel test named on the command line (see uk/ktest.h). */
#ifndef UK_KTEST_RUN_H
#define UK_KTEST_RUN_H

/* Boot CPU, task context, after boot. Runs `test=NAME` and returns its result; with no
 * `test=` returns 0; an unknown name lists the tests and returns 2. */
int ktest_run_from_cmdline(void);

#endif
