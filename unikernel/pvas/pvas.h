/*
 * pvas.h: Partitioned Virtual Address Space (PVAS): several MPI ranks in one address space.
 *
 * An address space (struct pvas_as) is one page table whose upper half is the kernel's.
 * Each task spawned into it gets the next free partition (PART_BASE + i * PART_SIZE, from a
 * machine-wide pool, so a partition's address means the same everywhere and is mapped only
 * by its owner): its image's data and bss, its heap, its stack between guard pages. Tasks
 * of one address space share the page table (no CR3 load between them) and read each
 * other's memory with plain loads; the read-only pages of one image (text, rodata) are one
 * set of frames shared by all tasks started from it.
 */
#ifndef UK_PVAS_H
#define UK_PVAS_H
#include <stddef.h>
#include <stdint.h>
#include "kernel/sched.h"
#include "kernel/mempol.h"

struct pvas_image;
struct pvas_as;

/* A rank's output line reaches the console whole, behind its "[rank] " prefix, up to
 * PVAS_OUT_LINE bytes (a pipe's PIPE_BUF): no other rank's output lands inside it. A
 * longer one is written in parts of that size, the later parts without a prefix, so that
 * its bytes arrive unchanged (another rank's line may then land between two parts).
 * Hazard: console_write holds the console lock, interrupts masked on the writer's CPU,
 * for a whole line: on the UART an I/O port write per byte, each one QEMU passes on to
 * its character device, so a long line delays that CPU's interrupts for as long. */
#define PVAS_OUT_LINE   4096
#define PVAS_OUT_PREFIX 16 /* "[rank] ", the rank up to 7 digits */

struct pvas_task {
    struct task task; /* first: a struct task * is a struct pvas_task * for PVAS tasks */
    struct pvas_as *as;
    const struct pvas_image *img;
    int part;      /* partition index */
    uint64_t base; /* partition base address */
    uint64_t heap_start, brk, heap_mapped, heap_limit;
    uint64_t stack_lo, stack_hi;
    int rank, size;          /* placement in the job */
    struct mempol_state mem; /* where its private frames come from (the job's mem=) */
    uint64_t entry;
    int argc;
    uint64_t argv, envp; /* addresses inside the partition */
    /* stdout, stderr: the line being written (after room for its "[rank] " prefix), its
     * length, and whether it continues a line written out because it filled the buffer */
    char out[2][PVAS_OUT_PREFIX + PVAS_OUT_LINE + 1];
    int outlen[2];
    uint8_t outcont[2];
    struct pvas_task *as_next;
};

/* Task context (the loader allocates). Validate an ELF image (static-PIE x86_64) and build
 * its shared read-only pages. `elf` must stay valid while the image is in use. Returns
 * NULL with a reason in `err` for anything malformed or unsupported. */
struct pvas_image *pvas_image_open(const char *name, const void *elf, size_t len, char *err,
                                   size_t errlen);
/* Task context; no task uses the image any more. */
void pvas_image_close(struct pvas_image *img);

/* Task context. A new, empty address space, or NULL. Tasks get ranks rank_base, +1, ... of
 * a job of `size` ranks, placed round-robin from slot `first_cpu` of smp_place_cpu() (one
 * rank per core first). */
struct pvas_as *pvas_create(void);
void pvas_set_placement(struct pvas_as *as, int rank_base, int size, int first_cpu);
/* Task context, before the first pvas_spawn: the node policy of the tasks' private memory
 * (kernel/mempol.h; MEMPOL_DDR unless set). */
void pvas_set_mempol(struct pvas_as *as, enum mempol p);
/* Any context: count t's heap and stack pages by the NUMA node of their frames (from the
 * physical addresses its page table maps them to), into by_node[NUMA_MAX_NODES]; returns
 * the total, pages outside every SRAT range included. */
uint64_t pvas_task_pages_by_node(const struct pvas_task *t, uint64_t *by_node);
/* Task context, before the first pvas_spawn: the job will start `count` tasks here. */
void pvas_set_local(struct pvas_as *as, int count);
/* Any context: how many of the tasks of `as` are (or will be) placed on `cpu`. */
int pvas_cpu_tasks(struct pvas_as *as, int cpu);
/* Task context. Load `img` into the next free partition of `as` and start it as a task.
 * argv and envp are NULL-terminated and copied. Returns NULL with a reason in `err`. */
struct pvas_task *pvas_spawn(struct pvas_as *as, const struct pvas_image *img, char *const argv[],
                             char *const envp[], char *err, size_t errlen);
/* Task context. Wait until every task of `as` has exited; the first non-zero exit code
 * (in exit order), or 0. */
int pvas_wait(struct pvas_as *as);
/* Task context, not a task of `as`. End all its tasks (those still running are killed at
 * their next interrupt) and free everything: partitions, frames, page tables. */
void pvas_destroy(struct pvas_as *as);

/* Any context. Called in the scheduler context of the CPU a task of `as` exited on. */
void pvas_on_task_exit(struct pvas_as *as, void (*fn)(struct pvas_task *t));

/* The task's entry (struct task.entry): runs the application on its partition stack. */
void pvas_task_main(void *arg);
/* Any context. The PVAS task running on this CPU, or NULL. Inline: the ABI and the MPI
 * engine ask on every call. */
static inline struct pvas_task *pvas_current(void)
{
    struct task *t = task_current();
    return t && t->entry == pvas_task_main ? (struct pvas_task *)t : 0;
}
/* Statistics: page-table frames of `as`'s lower half; live tasks. */
uint64_t pvas_table_frames(struct pvas_as *as);
int pvas_live(struct pvas_as *as); /* tasks not yet exited */
/* Any context. Partition base of the task of `as` with `rank`, or 0. */
uint64_t pvas_rank_base(struct pvas_as *as, int rank);
uint64_t pvas_pml4(struct pvas_as *as);

/* Any context. The symbol of `img` containing partition-relative address `off`. */
const char *pvas_image_symbol(const struct pvas_image *img, uint64_t off, uint64_t *symoff);
/* Boot only. */
void pvas_init(void);

#endif
