/*
 * hosted.c: the platform of boards/hosted, the unikernel on CPUs and memory a running Linux
 * keeps for it, booted by host-kmod/ukload. The loader owns the start of the reserved
 * range (host-kmod/ukload/ukload_shm.h); we write only the console ring and the exit word
 * there, through phys_ptr() (the boot identity map first, the direct map after vmm_init()).
 */
#include "hosted.h"
#include "ukload_shm.h"
#include "kernel/bootinfo.h"
#include "kernel/vmm.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/numa.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/x86.h"
#include "uk/console.h"
#include "uk/power.h"
#include "uk/time.h"
#include "memlayout.h"

_Static_assert(KERNEL_PHYS_BASE - HOSTED_BASE == UKL_KERNEL_OFF,
               "boards/hosted/board.mk: the image must start at UKL_KERNEL_OFF in the range");

#define APIC_BASE_ADDR_MASK 0xffffff000ULL /* IA32_APIC_BASE bits 35:12 */
#define KHZ                 1000

static struct ukl_shm *shm(void)
{
    return phys_ptr(HOSTED_BASE + UKL_SHM_OFF);
}

/* Boot only (BSP). */
void hosted_console_init(void)
{
    __atomic_store_n(&shm()->state, UKL_STATE_UP, __ATOMIC_RELEASE);
}

/* Under the console lock. The loader reads the ring without a lock: the byte is stored
 * before the head that publishes it (release), and a reader that falls more than
 * UKL_CONS_SIZE behind loses the oldest bytes, never sees torn ones it was told about. */
void hosted_console_putc(char c)
{
    struct ukl_shm *s = shm();
    char *ring = phys_ptr(HOSTED_BASE + UKL_CONS_OFF);
    uint64_t head = s->cons_head;
    ring[head & (UKL_CONS_SIZE - 1)] = c;
    __atomic_store_n(&s->cons_head, head + 1, __ATOMIC_RELEASE);
}

/* Boot only (BSP): the CPUs of apic_ids=A,B,... (the loader's list, this CPU first) into
 * `acpi`; this CPU alone without the list. A malformed list is a loader bug: panic. */
static void cpus_from_cmdline(uint32_t self)
{
    char list[MAX_CPUS * 8];
    acpi.ncpus = 1;
    acpi.cpu_apic_id[0] = self;
    acpi.max_apic_id = self;
    if (!cmdline_get("apic_ids", list, sizeof list))
        return;
    int n = 0;
    for (const char *p = list; *p;) {
        uint64_t id = 0;
        if (*p < '0' || *p > '9')
            panic("hosted: bad apic_ids=%s", list);
        while (*p >= '0' && *p <= '9' && id <= MAX_APIC_ID)
            id = id * 10 + (uint64_t)(*p++ - '0');
        if (id > MAX_APIC_ID || n >= MAX_CPUS || (*p && *p++ != ','))
            panic("hosted: bad apic_ids=%s (at most %d ids up to %d)", list, MAX_CPUS, MAX_APIC_ID);
        if (n == 0 && id != self)
            panic("hosted: apic_ids=%s does not start with this CPU (%u)", list, self);
        acpi.cpu_apic_id[n++] = (uint32_t)id;
        if (id > acpi.max_apic_id)
            acpi.max_apic_id = (uint32_t)id;
    }
    if (!n)
        panic("hosted: empty apic_ids=");
    acpi.ncpus = n;
}

/* Boot only (BSP), after vmm_init(). */
void hosted_platform_init(void)
{
    cpus_from_cmdline(lapic_cpuid_id());
    acpi.lapic_phys = rdmsr(MSR_APIC_BASE) & APIC_BASE_ADDR_MASK;
    acpi.ioapic_phys = 0; /* Linux's: ioapic_init() leaves it alone */
    numa_finish();
}

/* Boot only (BSP). */
void hosted_tsc_init(void)
{
    uint64_t khz = cmdline_get_u64("tsc_khz", 0);
    if (!khz)
        panic("hosted: no tsc_khz= on the command line (ukload sets it)");
    tsc_set(khz * KHZ, cmdline_get_u64("epoch_ns", 0));
}

/* machine_exit() only. */
void hosted_exit(int code)
{
    struct ukl_shm *s = shm();
    s->exit_code = (uint32_t)code;
    __atomic_store_n(&s->state, UKL_STATE_EXITED, __ATOMIC_RELEASE);
}
