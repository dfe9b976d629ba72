/* trap.h: the interrupt frame and the vector map. */
#ifndef UK_TRAP_H
#define UK_TRAP_H
#include <stdint.h>

struct trapframe {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

/* CPU exceptions: vectors below VEC_EXCEPTIONS; the ones the kernel treats specially. */
#define VEC_NMI          2
#define VEC_DOUBLE_FAULT 8
#define VEC_PAGE_FAULT   14 /* error code: PF_ERR_* (x86.h); the address in CR2 */
#define VEC_MACHINE_CHK  18
#define VEC_EXCEPTIONS   32

/* Vectors. 0-31: CPU exceptions. 32-47: where the (masked) 8259 PIC would deliver, so a
 * stray legacy interrupt is recognisable. Devices get 48 and up. */
#define VEC_PIC_BASE    32
#define VEC_DEVICE      48
#define VEC_VNET_RX     0x60 /* virtio-net RX queue (MSI-X entry 0) and its self-IPI */
#define VEC_IPI_WAKE    0xf0 /* wakes a halted CPU (work in its mailbox, ipi.c) */
#define VEC_IPI_PING    0xf1 /* IPI round trip tests and benchmarks */
#define VEC_IPI_PONG    0xf2
#define VEC_IPI_CAD     0xf3 /* CAD progress handed to a rank's home CPU (mpi/core/mpe_cad.c) */
#define VEC_IPI_STOP    0xfd /* stop this CPU for good (machine_exit, fault) */
#define VEC_LAPIC_TIMER 0xef
#define VEC_SPURIOUS    0xff

/* The frame prologue of our code (-fno-omit-frame-pointer): push %rbp; mov %rsp,%rbp. A
 * function whose rip is not past it has not pushed its frame yet, so a backtrace finds
 * its return address on top of the stack instead of in the frame chain. */
#define FRAME_PROLOGUE_LEN 4
static inline int frame_prologue_at(const uint8_t *f)
{
    return f[0] == 0x55 && f[1] == 0x48 && f[2] == 0x89 && f[3] == 0xe5;
}

typedef void (*irq_handler_t)(struct trapframe *tf);

/* Boot or task context: route `vector` to `fn` (on every CPU; the IDT is shared). */
void irq_register(int vector, irq_handler_t fn);
/* Boot, and AP start-up: load the IDT on this CPU. */
void idt_init(void);
void idt_load_this(void);
/* Interrupt context (called by isr.S only). */
void trap_dispatch(struct trapframe *tf);
/* Set by PVAS: describe a fault of application code (who, where in which image, what the
 * address is). Returns 1 if the fault belongs to a task and was described. */
extern int (*fault_task_hook)(const struct trapframe *tf, uint64_t cr2);

/* Any context: print a fault report for `tf` and end the job. */
void fault_report(struct trapframe *tf, const char *why) __attribute__((noreturn));

#endif
