// SPDX-License-Identifier: GPL-2.0
/*
 * ukload.ko: boots the unikernel (boards/hosted) on a CPU and a physical range that the
 * running Linux leaves alone (maxcpus=, memmap=SIZE$ADDR), and shows its console and exit
 * code through /dev/ukload (ukload_uapi.h). One unikernel at a time; while it runs, the
 * netdev ukvnic0 (ukload_vnic.c) is its network.
 *
 * The range and the real-mode page are module parameters, checked at load against
 * Linux's own resources: each must be Reserved (memmap=) from end to end and unused by EFI,
 * so the module refuses to load rather than let the unikernel overwrite Linux's memory,
 * persistent memory, the firmware's tables or a device.
 *
 * LOAD and BOOT run any code the caller gives, in ring 0 on a physical CPU with all of
 * physical memory: as kexec, whatever the device node's mode says (ukl_may()).
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/efi.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/security.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include "ukload.h"
#include "ukload_shm.h"
#include "ukload_uapi.h"

static unsigned long ukl_base; /* not phys_base: x86's kernel has one */
module_param_named(phys_base, ukl_base, ulong, 0444);
MODULE_PARM_DESC(phys_base, "start of the reserved range (memmap=SIZE$ADDR), 2 MiB aligned");
static unsigned long ukl_size;
module_param_named(phys_size, ukl_size, ulong, 0444);
MODULE_PARM_DESC(phys_size, "size of the reserved range, 2 MiB aligned");
static unsigned long ukl_tramp = 0x70000;
module_param_named(tramp_phys, ukl_tramp, ulong, 0444);
MODULE_PARM_DESC(tramp_phys,
		 "reserved page below 1 MiB for the real-mode start-up code (memmap=4K$ADDR)");

#define UKL_RANGE_ALIGN SZ_2M
#define UKL_MIN_SIZE (UKL_KERNEL_OFF + SZ_2M)
#define UKL_LOW_LIMIT SZ_1M /* a start-up IPI's vector addresses the first 1 MiB only */
#define UKL_READ_CHUNK PAGE_SIZE
#define UKL_RAM "System RAM"
#define UKL_GAP "no resource (a device may answer there)"

static DEFINE_MUTEX(ukl_lock); /* everything below, and the range's loader part */
static struct ukl_range ukl_range;
static u32 ukl_state = UKLOAD_IDLE;
static unsigned int ukl_cpu; /* the first CPU */
static u64 ukl_cpus;	     /* all of them */
/* The CPUs the unikernel runs on, or 0: read by the hotplug callback without ukl_lock. */
static u64 ukl_busy;
static enum cpuhp_state ukl_hp_state;

/* CPU hotplug, before Linux boots a CPU: never the one the unikernel runs on. */
static int ukl_cpu_prepare(unsigned int cpu)
{
	if (cpu >= UKLOAD_MAX_CPU || !(READ_ONCE(ukl_busy) & BIT_ULL(cpu)))
		return 0;
	pr_err("ukload: CPU %u runs the unikernel: ukload stop first\n", cpu);
	return -EBUSY;
}

/* Module init: what a resource of /proc/iomem is, for a refusal's message. */
static const char *ukl_res_kind(const struct resource *res)
{
	if (res->flags & IORESOURCE_SYSRAM)
		return UKL_RAM;
	switch (res->desc) {
	case IORES_DESC_ACPI_TABLES:
		return "ACPI Tables";
	case IORES_DESC_ACPI_NV_STORAGE:
		return "ACPI Non-volatile Storage";
	case IORES_DESC_PERSISTENT_MEMORY:
		return "Persistent Memory";
	case IORES_DESC_PERSISTENT_MEMORY_LEGACY:
		return "Persistent Memory (legacy)";
	case IORES_DESC_SOFT_RESERVED:
		return "Soft Reserved";
	case IORES_DESC_CRASH_KERNEL:
		return "Crash kernel";
	default:
		return "a device's or the firmware's resource";
	}
}

/* ukl_check_range()'s walk: how far Reserved resources cover the range, and what else. */
struct ukl_cover {
	u64 next;	  /* the first address not covered yet */
	u64 start, end;	  /* the first part that is not Reserved, if kind */
	const char *kind; /* what that part is, NULL if none */
};

/* walk_iomem_res_desc() callback, module init: res is a top-level resource clipped to the
 * range, in address order. Only "Reserved" (memmap=SIZE$ADDR, the firmware's plain reserved
 * areas) is accepted.
 */
static int ukl_cover_one(struct resource *res, void *arg)
{
	struct ukl_cover *c = arg;

	if (res->start > c->next) {
		c->start = c->next;
		c->end = res->start - 1;
		c->kind = UKL_GAP;
		return 1; /* stops the walk */
	}
	if (res->desc != IORES_DESC_RESERVED || (res->flags & IORESOURCE_SYSRAM)) {
		c->start = res->start;
		c->end = res->end;
		c->kind = ukl_res_kind(res);
		return 1;
	}
	c->next = res->end + 1;
	return 0;
}

/*
 * Module init: an EFI descriptor of the range that the firmware still uses at run time
 * (runtime services, ACPI, reserved, MMIO, persistent), or NULL. /proc/iomem shows EFI's
 * runtime regions as plain "Reserved": only EFI's own map tells them from memmap=.
 */
static const efi_memory_desc_t *ukl_efi_used(phys_addr_t base, size_t size)
{
	const efi_memory_desc_t *md;
	u64 end;

	if (!efi_enabled(EFI_MEMMAP))
		return NULL;
	for_each_efi_memory_desc(md) {
		end = md->phys_addr + (md->num_pages << EFI_PAGE_SHIFT);
		if (md->phys_addr >= base + size || end <= base)
			continue;
		if (md->attribute & EFI_MEMORY_RUNTIME)
			return md;
		switch (md->type) {
		case EFI_LOADER_CODE:
		case EFI_LOADER_DATA:
		case EFI_BOOT_SERVICES_CODE:
		case EFI_BOOT_SERVICES_DATA:
		case EFI_CONVENTIONAL_MEMORY: /* memory Linux got, reserved by memmap= */
			break;
		default:
			return md;
		}
	}
	return NULL;
}

/*
 * Module init: a range that is Reserved in /proc/iomem from end to end (memmap=SIZE$ADDR)
 * and unused by EFI, or a clear refusal. Anything else there is Linux's memory (System
 * RAM), data that outlives Linux (persistent memory, ACPI NVS), the firmware's (ACPI
 * tables, EFI runtime) or a device's (MMIO, or a gap where one may sit): the unikernel
 * would overwrite it.
 */
static int ukl_check_range(const char *what, phys_addr_t base, size_t size)
{
	struct ukl_cover c = { .next = base };
	const efi_memory_desc_t *md;
	u64 last = (u64)base + size - 1;

	walk_iomem_res_desc(IORES_DESC_NONE, 0, base, last, &c, ukl_cover_one);
	if (!c.kind && c.next <= last) {
		c.start = c.next;
		c.end = last;
		c.kind = UKL_GAP;
	}
	if (c.kind) {
		pr_err("ukload: %s 0x%llx-0x%llx: 0x%llx-0x%llx is %s, not Reserved\n", what,
		       (u64)base, last, c.start, c.end, c.kind);
		if (!strcmp(c.kind, UKL_RAM))
			pr_err("ukload: reserve it on Linux's command line: memmap=%zuK$0x%llx\n",
			       size / SZ_1K, (u64)base);
		else
			pr_err("ukload: choose System RAM reserved with memmap=SIZE$ADDR\n");
		return -EBUSY;
	}
	md = ukl_efi_used(base, size);
	if (md) {
		pr_err("ukload: %s 0x%llx-0x%llx: EFI type %u (attributes 0x%llx) at 0x%llx\n",
		       what, (u64)base, last, md->type, md->attribute, md->phys_addr);
		return -EBUSY;
	}
	return 0;
}

static struct ukl_shm *ukl_shm(void)
{
	return ukl_range.virt + UKL_SHM_OFF;
}

/* ioctl, ukl_lock held. */
static int ukl_load(const struct ukload_load __user *uarg)
{
	struct ukload_load a;
	char *cmdline;
	u8 *elf;
	struct ukl_initrd initrd = { 0 };
	u64 end, limit;
	u32 entry;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (ukl_state == UKLOAD_RUNNING)
		return -EBUSY;
	if (!a.elf_len || a.elf_len > ukl_range.size) {
		pr_err("ukload: image of %llu bytes (the range has %zu)\n", a.elf_len,
		       ukl_range.size);
		return -EFBIG;
	}
	if (a.cmdline_len > UKLOAD_CMDLINE_MAX)
		return -E2BIG;
	cmdline = memdup_user_nul(u64_to_user_ptr(a.cmdline), a.cmdline_len);
	if (IS_ERR(cmdline))
		return PTR_ERR(cmdline);
	/* the module's own copy: user space cannot change it between check and copy */
	elf = vmemdup_user(u64_to_user_ptr(a.elf), a.elf_len);
	if (IS_ERR(elf)) {
		kfree(cmdline);
		return PTR_ERR(elf);
	}
	ukl_state = UKLOAD_IDLE; /* the old image is gone from here on */
	err = ukl_elf_load(&ukl_range, elf, a.elf_len, &entry, &end);
	if (!err && a.initrd_len) { /* after the image; the unikernel checks what it reads */
		initrd.phys = ALIGN(end, PAGE_SIZE);
		initrd.size = a.initrd_len;
		if (check_add_overflow(initrd.phys, initrd.size, &limit) ||
		    limit > ukl_range.base + ukl_range.size) {
			pr_err("ukload: initrd of %llu bytes does not fit after the image\n",
			       a.initrd_len);
			err = -EFBIG;
		} else if (copy_from_user(ukl_range.virt + (initrd.phys - ukl_range.base),
					  u64_to_user_ptr(a.initrd), initrd.size)) {
			err = -EFAULT;
		}
	}
	if (!err)
		err = ukl_boot_prepare(&ukl_range, entry, cmdline, a.cpu, a.cpus, &initrd);
	if (!err) {
		ukl_vnic_prepare(&ukl_range);
		ukl_state = UKLOAD_LOADED;
		ukl_cpu = a.cpu;
		ukl_cpus = a.cpus;
	}
	kvfree(elf);
	kfree(cmdline);
	return err;
}

/* ioctl, ukl_lock held. */
static int ukl_boot(void)
{
	int err;

	if (ukl_state != UKLOAD_LOADED)
		return ukl_state == UKLOAD_RUNNING ? -EBUSY : -ENOEXEC;
	cpus_read_lock(); /* no CPU comes up between the online check and the IPIs */
	err = ukl_boot_cpus(&ukl_range, ukl_cpu, ukl_cpus);
	if (!err)
		WRITE_ONCE(ukl_busy, ukl_cpus);
	cpus_read_unlock();
	if (err)
		return err;
	__module_get(THIS_MODULE); /* no unload while the CPU runs the range's code */
	ukl_state = UKLOAD_RUNNING;
	err = ukl_vnic_start(&ukl_range, apic->cpu_present_to_apicid(ukl_cpu));
	if (err) /* the unikernel runs on without a network */
		pr_warn("ukload: no ukvnic0 (%d)\n", err);
	return 0;
}

/* ioctl, ukl_lock held. The image ran: its data is spent, a new run needs a new LOAD. */
static int ukl_stop(void)
{
	if (ukl_state != UKLOAD_RUNNING)
		return -ESRCH;
	ukl_vnic_quiesce(); /* no frame or IPI towards the CPUs from here on */
	ukl_stop_cpus(ukl_cpus);
	ukl_vnic_stop();
	WRITE_ONCE(ukl_busy, 0);
	ukl_state = UKLOAD_IDLE;
	pr_info("ukload: stopped CPUs 0x%llx\n", ukl_cpus);
	module_put(THIS_MODULE);
	return 0;
}

/* ioctl, ukl_lock held. */
static int ukl_status(struct ukload_status __user *uarg)
{
	struct ukl_shm *shm = ukl_shm();
	struct ukload_status s = {
		.state = ukl_state,
		.cpu = ukl_cpu,
		.cpus = ukl_cpus,
		.phys_base = ukl_range.base,
		.phys_size = ukl_range.size,
	};

	if (READ_ONCE(shm->magic) == UKL_MAGIC) {
		/* pairs with hosted_exit()'s release: the exit code before the state */
		s.shm_state = smp_load_acquire(&shm->state);
		s.exit_code = READ_ONCE(shm->exit_code);
		s.cons_head = READ_ONCE(shm->cons_head);
	}
	return copy_to_user(uarg, &s, sizeof(s)) ? -EFAULT : 0;
}

/*
 * ioctl, before taking ukl_lock: may the caller do cmd? STATUS is for whoever the
 * device's mode lets open it. STOP ends a job: CAP_SYS_ADMIN. LOAD and BOOT put the
 * caller's code in ring 0 with all of physical memory and I/O: also CAP_SYS_RAWIO (what
 * /dev/mem and iopl() ask), so a process given CAP_SYS_ADMIN for something else cannot;
 * and never under lockdown (kernel_lockdown(7): it logs the refusal), as kexec_load.
 */
static int ukl_may(unsigned int cmd)
{
	switch (cmd) {
	case UKLOAD_LOAD:
	case UKLOAD_BOOT:
		if (!capable(CAP_SYS_ADMIN) || !capable(CAP_SYS_RAWIO))
			return -EPERM;
		return security_locked_down(LOCKDOWN_KEXEC);
	case UKLOAD_STOP:
		return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
	default:
		return 0;
	}
}

/* ioctl(2) on /dev/ukload, process context. */
static long ukl_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long err;

	err = ukl_may(cmd);
	if (err)
		return err;
	mutex_lock(&ukl_lock);
	switch (cmd) {
	case UKLOAD_LOAD:
		err = ukl_load(uarg);
		break;
	case UKLOAD_BOOT:
		err = ukl_boot();
		break;
	case UKLOAD_STOP:
		err = ukl_stop();
		break;
	case UKLOAD_STATUS:
		err = ukl_status(uarg);
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&ukl_lock);
	return err;
}

/*
 * The console since LOAD, from *pos; never blocks (0: nothing new). The unikernel writes
 * the ring without waiting for us: a reader more than UKL_CONS_SIZE behind skips to the
 * oldest byte still there, and bytes overwritten while we copied are dropped.
 */
static ssize_t ukl_read(struct file *f, char __user *buf, size_t count, loff_t *pos)
{
	const u8 *ring = ukl_range.virt + UKL_CONS_OFF;
	struct ukl_shm *shm = ukl_shm();
	u8 *kbuf;
	u64 head, from, n, i;
	ssize_t ret = 0;

	kbuf = kmalloc(UKL_READ_CHUNK, GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	mutex_lock(&ukl_lock);
	if (READ_ONCE(shm->magic) != UKL_MAGIC)
		goto out;
	/* pairs with the unikernel's release of the head after each byte (hosted.c) */
	head = smp_load_acquire(&shm->cons_head);
	from = *pos;
	if (from > head) /* a new image since this reader's last read */
		from = 0;
	if (head - from > UKL_CONS_SIZE)
		from = head - UKL_CONS_SIZE;
	n = min_t(u64, min_t(u64, head - from, count), UKL_READ_CHUNK);
	for (i = 0; i < n; i++)
		kbuf[i] = ring[(from + i) & (UKL_CONS_SIZE - 1)];
	smp_rmb(); /* the bytes before the head that says whether they were overwritten */
	head = READ_ONCE(shm->cons_head);
	i = 0;
	if (head - from > UKL_CONS_SIZE) /* the oldest ones were */
		i = min_t(u64, head - from - UKL_CONS_SIZE, n);
	if (copy_to_user(buf, kbuf + i, n - i)) {
		ret = -EFAULT;
		goto out;
	}
	*pos = from + n;
	ret = n - i;
out:
	mutex_unlock(&ukl_lock);
	kfree(kbuf);
	return ret;
}

static const struct file_operations ukl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = ukl_ioctl,
	.read = ukl_read,
	.llseek = noop_llseek,
};

static struct miscdevice ukl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ukload",
	.fops = &ukl_fops,
	.mode = 0600,
};

static int __init ukl_init_module(void)
{
	int err;

	if (!ukl_size || !IS_ALIGNED(ukl_base, UKL_RANGE_ALIGN) ||
	    !IS_ALIGNED(ukl_size, UKL_RANGE_ALIGN) || ukl_size < UKL_MIN_SIZE ||
	    ukl_base + ukl_size < ukl_base) {
		pr_err("ukload: phys_base=0x%lx phys_size=0x%lx: unaligned or below %u MiB\n",
		       ukl_base, ukl_size, UKL_MIN_SIZE / SZ_1M);
		return -EINVAL;
	}
	if (!PAGE_ALIGNED(ukl_tramp) || !ukl_tramp || ukl_tramp >= UKL_LOW_LIMIT) {
		pr_err("ukload: tramp_phys=0x%lx: need a page-aligned address below 1 MiB\n",
		       ukl_tramp);
		return -EINVAL;
	}
	err = ukl_check_range("range", ukl_base, ukl_size);
	if (!err)
		err = ukl_check_range("trampoline page", ukl_tramp, PAGE_SIZE);
	if (err)
		return err;
	ukl_range.base = ukl_base;
	ukl_range.size = ukl_size;
	ukl_range.tramp = ukl_tramp;
	ukl_range.virt = memremap(ukl_base, ukl_size, MEMREMAP_WB);
	ukl_range.tramp_virt = memremap(ukl_tramp, PAGE_SIZE, MEMREMAP_WB);
	if (!ukl_range.virt || !ukl_range.tramp_virt) {
		pr_err("ukload: cannot map the range or the trampoline page\n");
		err = -ENOMEM;
		goto unmap;
	}
	memset(ukl_shm(), 0, sizeof(struct ukl_shm));
	err = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "ukload:prepare", ukl_cpu_prepare,
					NULL);
	if (err < 0)
		goto unmap;
	ukl_hp_state = err;
	err = misc_register(&ukl_dev);
	if (err) {
		cpuhp_remove_state_nocalls(ukl_hp_state);
		goto unmap;
	}
	pr_info("ukload: range 0x%lx-0x%lx, trampoline page 0x%lx\n", ukl_base,
		ukl_base + ukl_size - 1, ukl_tramp);
	return 0;
unmap:
	if (ukl_range.tramp_virt)
		memunmap(ukl_range.tramp_virt);
	if (ukl_range.virt)
		memunmap(ukl_range.virt);
	return err;
}

/* Only with no unikernel running: a running one holds a module reference (ukl_boot). */
static void __exit ukl_exit_module(void)
{
	misc_deregister(&ukl_dev);
	cpuhp_remove_state_nocalls(ukl_hp_state);
	memunmap(ukl_range.tramp_virt);
	memunmap(ukl_range.virt);
}

module_init(ukl_init_module);
module_exit(ukl_exit_module);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Boot the ukmpi unikernel on reserved CPUs and memory");
