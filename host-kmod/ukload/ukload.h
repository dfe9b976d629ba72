/* SPDX-License-Identifier: GPL-2.0 */
/* ukload.h: what the parts of ukload.ko share. */
#ifndef UKLOAD_H
#define UKLOAD_H

#include <linux/types.h>

/* The reserved range as the module sees it: set once at module load, then read-only. */
struct ukl_range {
	phys_addr_t base;
	size_t size;
	void *virt;	   /* memremap()ed, write-back */
	phys_addr_t tramp; /* the real-mode page, below 1 MiB */
	void *tramp_virt;
};

/*
 * ukload_elf.c: check a private copy of an ELF image and copy its segments into the
 * range; *entry gets its PVH entry point (physical, 32-bit), *end the physical address
 * past its last segment. Caller holds ukl_lock.
 */
int ukl_elf_load(const struct ukl_range *r, const u8 *elf, size_t len, u32 *entry, u64 *end);

/* ukload_boot.c, all with ukl_lock held. */
/* The initrd as placed in the range (size 0: none). */
struct ukl_initrd {
	u64 phys, size;
};

int ukl_boot_prepare(const struct ukl_range *r, u32 entry, const char *cmdline, unsigned int first,
		     u64 cpus, const struct ukl_initrd *initrd);
int ukl_boot_cpus(const struct ukl_range *r, unsigned int first, u64 cpus);
void ukl_stop_cpus(u64 cpus);

/* ukload_vnic.c: ukvnic0, with ukl_lock held, process context. */
void ukl_vnic_prepare(const struct ukl_range *r);
int ukl_vnic_start(const struct ukl_range *r, u32 apicid);
void ukl_vnic_quiesce(void);
void ukl_vnic_stop(void);

/* ukload_tramp.S: the trampoline and its patch fields (ukload_boot.c fills them in). */
extern const u8 ukl_tramp_start[], ukl_tramp_end[], ukl_tramp_gdt[], ukl_tramp_pm32[];
extern const u8 ukl_tramp_gdt_base[], ukl_tramp_pm32_ptr[], ukl_tramp_entry[];
extern const u8 ukl_tramp_start_info[];

#endif
