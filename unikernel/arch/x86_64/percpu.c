/* percpu.c: per-CPU data, see percpu.h. */
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/x86.h"
#include "uk/cpu.h"

struct percpu percpu[MAX_CPUS];
volatile int ncpus_online;

/* Boot / AP start-up, on the CPU itself, before anything calls cpu_id(). */
void percpu_init_this(int id, uint32_t apic_id)
{
    struct percpu *p = &percpu[id];
    p->self = p;
    p->id = id;
    p->apic_id = apic_id;
    wrmsr(MSR_GS_BASE, (uint64_t)p);
}
