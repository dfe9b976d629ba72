/* pvas_task.h: building a task's partition, and its life (private to unikernel/pvas/). */
#ifndef UK_PVAS_TASK_H
#define UK_PVAS_TASK_H
#include "pvas/pvas.h"

struct pvas_as;

/* Task context: map the image into t's partition (shared read-only pages, private copies
 * of the writable ones), apply relocations, set up the heap bounds. 0 or -1 with `err`. */
int pvas_load_image(struct pvas_task *t, char *err, size_t errlen);
/* Task context: map and zero the stack between its guard pages. */
int pvas_map_stack(struct pvas_task *t, char *err, size_t errlen);
/* Any context: copy into the address space `as` (not necessarily loaded) at `va`. 0, or -1
 * (having copied a prefix) if a page is not mapped; callers that write into pages they
 * have just mapped (the stack) need not check. */
int pvas_copy_out(struct pvas_as *as, uint64_t va, const void *src, size_t len);
/* Task context (the ABI's sbrk): grow or shrink t's heap. */
void *pvas_sbrk(struct pvas_task *t, intptr_t incr);

/* Boot only: let fault reports describe application faults (pvas_fault.c). */
void pvas_fault_init(void);

#endif
