/* power.c: machine_exit() and panic(). */
#include "uk/power.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "kernel/fmt.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/trap.h"
#ifdef BOARD_HOSTED
#include "hosted.h"
#endif

#define ISA_DEBUG_EXIT_PORT 0xf4

static int exiting; /* set by the first machine_exit() */

/* Any context. */
void machine_stop_others(void)
{
    if (lapic_ready())
        lapic_send_ipi_all_but_self(VEC_IPI_STOP);
}

/* Any context. */
void machine_exit(int code)
{
    irq_disable();
    /* Two CPUs may end the machine at once (a rank's exit and a fault): one exit line. */
    if (__atomic_exchange_n(&exiting, 1, __ATOMIC_ACQ_REL))
        for (;;)
            halt();
    machine_stop_others(); /* so none of them prints after the exit line */
    code &= EXIT_STATUS_MASK;
    kprintf(EXIT_STATUS_LINE "%d\n", code);
#ifdef BOARD_HOSTED
    hosted_exit(code); /* the exit word in shared memory: the loader reads it */
#else
    outl(ISA_DEBUG_EXIT_PORT, (uint32_t)code);
#endif
    /* Not under QEMU (or no isa-debug-exit device): stop here. */
    for (;;)
        halt();
}

/* Any context. */
void panic(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    kvformat(buf, sizeof buf, fmt, ap);
    va_end(ap);
    kprintf("\n*** PANIC on cpu %d: %s\n", cpu_id(), buf);
    machine_exit(EXIT_PANIC);
}
