// SPDX-License-Identifier: GPL-2.0
/*
 * ukload_boot.c: the unikernel's boot on a CPU Linux never onlined: the PVH start_info
 * in the range, the real-mode trampoline in the low page, then INIT-SIPI-SIPI through
 * the kernel's APIC driver (apic->icr_write, xAPIC or x2APIC as Linux runs it), the way
 * arch/x86/kernel/smpboot.c wakes a secondary CPU. STOP is a lone INIT: the CPU waits for
 * a start-up IPI again, so Linux may online it afterwards.
 */
#include <linux/bitops.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <asm/apic.h>
#include <asm/tsc.h>
#include <asm/unaligned.h>
#include <xen/interface/hvm/start_info.h>
#include "ukload.h"
#include "ukload_shm.h"
#include "ukload_uapi.h"

#define UKL_INIT_DELAY_US 10000 /* INIT to SIPI, as smpboot.c's init_udelay default */
#define UKL_SIPI_DELAY_US 200	/* between the two start-up IPIs (Intel's MP spec) */
#define UKL_SIPI_TRIES 2
#define UKL_E820_RAM 1

/* Caller holds ukl_lock: the trampoline page is ours while no unikernel runs. */
static void ukl_tramp_patch(const struct ukl_range *r, u32 entry, u32 start_info)
{
	u8 *t = r->tramp_virt;

	memcpy(t, ukl_tramp_start, ukl_tramp_end - ukl_tramp_start);
	put_unaligned_le32(r->tramp + (ukl_tramp_gdt - ukl_tramp_start),
			   t + (ukl_tramp_gdt_base - ukl_tramp_start));
	put_unaligned_le32(r->tramp + (ukl_tramp_pm32 - ukl_tramp_start),
			   t + (ukl_tramp_pm32_ptr - ukl_tramp_start));
	put_unaligned_le32(entry, t + (ukl_tramp_entry - ukl_tramp_start));
	put_unaligned_le32(start_info, t + (ukl_tramp_start_info - ukl_tramp_start));
}

/*
 * Caller holds ukl_lock; the image is in place and no unikernel runs. The command line
 * is the caller's, NUL-terminated; the module adds the TSC rate (Linux measured it), the
 * time of day, and the CPUs' APIC ids (the first CPU's first: it starts the others).
 */
int ukl_boot_prepare(const struct ukl_range *r, u32 entry, const char *cmdline, unsigned int first,
		     u64 cpus, const struct ukl_initrd *initrd)
{
	struct hvm_start_info *si = r->virt + UKL_BOOT_OFF;
	struct hvm_memmap_table_entry *mm = (void *)(si + 1);
	struct ukl_shm *shm = r->virt + UKL_SHM_OFF;
	char *cl = r->virt + UKL_CMDLINE_OFF;
	struct hvm_modlist_entry *mod = (void *)(mm + 2);
	unsigned int cpu;
	size_t n;

	if (first >= UKLOAD_MAX_CPU || !(cpus & BIT_ULL(first))) {
		pr_err("ukload: the first CPU %u is not among the CPUs 0x%llx\n", first, cpus);
		return -EINVAL;
	}
	for (cpu = 0; cpu < UKLOAD_MAX_CPU; cpu++) {
		if ((cpus & BIT_ULL(cpu)) && (cpu >= nr_cpu_ids || !cpu_present(cpu))) {
			pr_err("ukload: CPU %u is not present\n", cpu);
			return -ENODEV;
		}
	}
	n = scnprintf(cl, UKL_CMDLINE_MAX, "%s tsc_khz=%u epoch_ns=%llu cpus=%u apic_ids=%u",
		      cmdline, tsc_khz, ktime_get_real_ns(), (unsigned int)hweight64(cpus),
		      apic->cpu_present_to_apicid(first));
	for (cpu = 0; cpu < UKLOAD_MAX_CPU; cpu++)
		if ((cpus & BIT_ULL(cpu)) && cpu != first)
			n += scnprintf(cl + n, UKL_CMDLINE_MAX - n, ",%u",
				       apic->cpu_present_to_apicid(cpu));
	if (n >= UKL_CMDLINE_MAX - 1) {
		pr_err("ukload: command line too long (at most %d bytes)\n", UKL_CMDLINE_MAX - 2);
		return -E2BIG;
	}
	memset(si, 0, sizeof(*si) + 2 * sizeof(*mm) + sizeof(*mod));
	si->magic = XEN_HVM_START_MAGIC_VALUE;
	si->version = 1; /* has the memory map */
	si->cmdline_paddr = r->base + UKL_CMDLINE_OFF;
	si->memmap_paddr = r->base + UKL_BOOT_OFF + sizeof(*si);
	si->memmap_entries = 2;
	/* the trampoline page: the unikernel starts its other CPUs through it (smp.c) */
	mm[0].addr = r->tramp;
	mm[0].size = PAGE_SIZE;
	mm[0].type = UKL_E820_RAM;
	mm[1].addr = r->base; /* the unikernel keeps the loader's part itself (pmm.c) */
	mm[1].size = r->size;
	mm[1].type = UKL_E820_RAM;
	if (initrd->size) { /* the job: the unikernel reserves it itself (pmm.c) */
		si->nr_modules = 1;
		si->modlist_paddr = r->base + UKL_BOOT_OFF + ((u8 *)mod - (u8 *)si);
		mod->paddr = initrd->phys;
		mod->size = initrd->size;
	}

	memset(shm, 0, UKL_CONS_OFF + UKL_CONS_SIZE);
	shm->magic = UKL_MAGIC;
	ukl_tramp_patch(r, entry, r->base + UKL_BOOT_OFF);
	return 0;
}

/*
 * Process context; this CPU's interrupts off around the two ICR writes (an IPI sent from
 * an interrupt handler in between would take our destination).
 */
static void ukl_ipi(u32 apicid, u32 low)
{
	unsigned long flags;

	local_irq_save(flags);
	apic_icr_write(low, apicid);
	local_irq_restore(flags);
	safe_apic_wait_icr_idle();
}

/* Caller holds ukl_lock; process context (it sleeps). */
static void ukl_init(u32 apicid)
{
	ukl_ipi(apicid, APIC_INT_LEVELTRIG | APIC_INT_ASSERT | APIC_DM_INIT);
	usleep_range(UKL_INIT_DELAY_US, 2 * UKL_INIT_DELAY_US);
	ukl_ipi(apicid, APIC_INT_LEVELTRIG | APIC_DM_INIT);
}

/*
 * Caller holds ukl_lock and cpus_read_lock (no CPU comes up meanwhile), process context;
 * ukl_boot_prepare() done for this image and these CPUs.
 */
int ukl_boot_cpus(const struct ukl_range *r, unsigned int first, u64 cpus)
{
	struct ukl_shm *shm = r->virt + UKL_SHM_OFF;
	unsigned int cpu = first;
	u32 apicid;
	int i;

	for (i = 0; i < UKLOAD_MAX_CPU; i++) {
		if ((cpus & BIT_ULL(i)) && cpu_online(i)) {
			pr_err("ukload: CPU %d is online in Linux (maxcpus=, or offline it)\n", i);
			return -EBUSY;
		}
	}
	apicid = apic->cpu_present_to_apicid(cpu);
	WRITE_ONCE(shm->state, UKL_STATE_BOOTING);
	wmb(); /* the image, start_info and trampoline before the CPU starts */
	ukl_init(apicid);
	for (i = 0; i < UKL_SIPI_TRIES; i++) {
		ukl_ipi(apicid, APIC_DM_STARTUP | (r->tramp >> PAGE_SHIFT));
		udelay(UKL_SIPI_DELAY_US);
	}
	pr_info("ukload: started CPU %u (APIC id %u) at 0x%x via page 0x%llx\n", cpu, apicid,
		get_unaligned_le32(r->tramp_virt + (ukl_tramp_entry - ukl_tramp_start)),
		(u64)r->tramp);
	return 0;
}

/* Caller holds ukl_lock, process context. */
void ukl_stop_cpus(u64 cpus)
{
	unsigned int cpu;

	for (cpu = 0; cpu < UKLOAD_MAX_CPU; cpu++)
		if (cpus & BIT_ULL(cpu))
			ukl_init(apic->cpu_present_to_apicid(cpu));
}
