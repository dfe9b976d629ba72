/* pvas_fs.h: application files (pvas_abi_fs.c), private to unikernel/pvas/. */
#ifndef UK_PVAS_FS_H
#define UK_PVAS_FS_H

struct pvas_task;
struct uk_fs_abi;

extern const struct uk_fs_abi pvas_fs_abi;
/* Scheduler context: close every output file task `t` still has open. */
void pvas_fs_task_exited(struct pvas_task *t);

#endif
