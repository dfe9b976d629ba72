// SPDX-License-Identifier: GPL-2.0
/*
 * ukload_elf.c: the unikernel's ELF image, checked and copied into the reserved range.
 *
 * The image is the module's private copy (ukload_main.c), so it cannot change between
 * the checks and the copy. Every offset and length from the file is checked against the
 * file's size and every physical address against the part of the range the image may
 * use (from UKL_KERNEL_OFF to the end), with overflow-checked sums: a bad image is
 * refused before a single byte of the range is written.
 */
#include <linux/elf.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <asm/unaligned.h>
#include "ukload.h"
#include "ukload_shm.h"

#define UKL_MAX_PHDRS 64
#define XEN_ELFNOTE_PHYS32_ENTRY 18 /* the PVH entry point note */
#define UKL_NOTE_ALIGN 4

/* [off, off + n) inside [0, size)? */
static bool ukl_in(u64 off, u64 n, u64 size)
{
	u64 end;

	return !check_add_overflow(off, n, &end) && end <= size;
}

/* The PVH entry from a PT_NOTE segment, 0 if it has none. */
static u32 ukl_note_entry(const u8 *elf, const struct elf64_phdr *ph)
{
	const u8 *p = elf + ph->p_offset, *end = p + ph->p_filesz;

	while (end - p >= (long)sizeof(struct elf64_note)) {
		const struct elf64_note *n = (const struct elf64_note *)p;
		u64 name = ALIGN((u64)n->n_namesz, UKL_NOTE_ALIGN);
		u64 desc = ALIGN((u64)n->n_descsz, UKL_NOTE_ALIGN);
		u64 left = end - p - sizeof(*n);

		if (name > left || desc > left - name)
			return 0;
		p += sizeof(*n);
		if (n->n_type == XEN_ELFNOTE_PHYS32_ENTRY && n->n_namesz == 4 &&
		    !memcmp(p, "Xen", 4) && n->n_descsz >= sizeof(u32))
			return get_unaligned_le32(p + name);
		p += name + desc;
	}
	return 0;
}

static int ukl_check(const struct ukl_range *r, const u8 *elf, size_t len, u32 *entry)
{
	const struct elf64_hdr *eh = (const struct elf64_hdr *)elf;
	const struct elf64_phdr *ph;
	u64 lo = r->base + UKL_KERNEL_OFF, hi = r->base + r->size, end;
	bool entry_ok = false;
	int i;

	*entry = 0;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		pr_err("ukload: not an ELF file\n");
		return -ENOEXEC;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64 || eh->e_type != ET_EXEC) {
		pr_err("ukload: not an x86-64 executable ELF\n");
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(*ph) || !eh->e_phnum || eh->e_phnum > UKL_MAX_PHDRS ||
	    !ukl_in(eh->e_phoff, (u64)eh->e_phnum * sizeof(*ph), len)) {
		pr_err("ukload: ELF program headers out of the file (%u at %llu)\n", eh->e_phnum,
		       eh->e_phoff);
		return -ENOEXEC;
	}
	ph = (const struct elf64_phdr *)(elf + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD && ph[i].p_type != PT_NOTE)
			continue;
		if (!ukl_in(ph[i].p_offset, ph[i].p_filesz, len)) {
			pr_err("ukload: ELF segment %d out of the file\n", i);
			return -ENOEXEC;
		}
		if (ph[i].p_type == PT_NOTE) {
			if (!*entry)
				*entry = ukl_note_entry(elf, &ph[i]);
			continue;
		}
		if (ph[i].p_filesz > ph[i].p_memsz ||
		    check_add_overflow(ph[i].p_paddr, ph[i].p_memsz, &end) || ph[i].p_paddr < lo ||
		    end > hi) {
			pr_err("ukload: ELF segment %d at 0x%llx+0x%llx outside 0x%llx-0x%llx\n", i,
			       ph[i].p_paddr, ph[i].p_memsz, lo, hi - 1);
			pr_err("ukload: build the image for this range (BOARD=hosted)\n");
			return -ENOEXEC;
		}
	}
	if (!*entry) {
		pr_err("ukload: ELF has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)\n");
		return -ENOEXEC;
	}
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && *entry >= ph[i].p_paddr &&
		    *entry - ph[i].p_paddr < ph[i].p_filesz)
			entry_ok = true;
	if (!entry_ok) {
		pr_err("ukload: PVH entry 0x%x is not in an executable segment\n", *entry);
		return -ENOEXEC;
	}
	return 0;
}

/* Caller holds ukl_lock and owns elf (the module's copy); the unikernel is not running. */
int ukl_elf_load(const struct ukl_range *r, const u8 *elf, size_t len, u32 *entry, u64 *end)
{
	const struct elf64_hdr *eh = (const struct elf64_hdr *)elf;
	const struct elf64_phdr *ph;
	int i, err;

	err = ukl_check(r, elf, len, entry);
	if (err)
		return err;
	ph = (const struct elf64_phdr *)(elf + eh->e_phoff);
	*end = 0;
	for (i = 0; i < eh->e_phnum; i++) {
		void *dst = r->virt + (ph[i].p_paddr - r->base);

		if (ph[i].p_type != PT_LOAD)
			continue;
		memcpy(dst, elf + ph[i].p_offset, ph[i].p_filesz);
		/* .bss: zero, whatever the last run left there */
		memset(dst + ph[i].p_filesz, 0, ph[i].p_memsz - ph[i].p_filesz);
		*end = max(*end, ph[i].p_paddr + ph[i].p_memsz); /* checked by ukl_check() */
	}
	return 0;
}
