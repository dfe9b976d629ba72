/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2g_pin.h: the long-term pin of a process's buffer that o2g (dump area, POST buffers)
 * and kacc (graph buffers) make, static inline so that both modules use it without an
 * export.
 *
 * Both pin with FOLL_LONGTERM and write the pages from softirq through a kernel mapping,
 * for as long as the process wants. A page of a shared mapping of a regular file written
 * that way is dirtied behind the filesystem's back (no page_mkwrite, no writeback
 * protection): the known GUP class of filesystem BUGs and WARNs. So only memory without
 * a filesystem behind it is pinned:
 *   - anonymous memory (a private or shared anonymous mapping: shared anonymous memory
 *     is shmem);
 *   - shmem (tmpfs files, memfd, SysV shm);
 *   - a private mapping of a file: a writable pin breaks copy-on-write first and pins
 *     an anonymous copy; a read-only pin pins a page-cache page that nobody writes
 *     through it (a program's initialised data lives in such mappings).
 * A shared mapping of any other file is refused with -EOPNOTSUPP; a range that is not
 * mapped whole, or a VM_IO/VM_PFNMAP mapping, with -EFAULT. Every VMA of the range is
 * checked and the range pinned under one mmap_read_lock, so that the process cannot
 * replace a VMA between the check and the pin.
 */
#ifndef O2G_PIN_H
#define O2G_PIN_H

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>

/* Process context, mmap lock of the current process read-held: 0 if every VMA of
 * [start, end) may be pinned long-term (see above), else -EFAULT or -EOPNOTSUPP.
 */
static inline int o2g_pin_check(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	unsigned long addr = start;

	while (addr < end) {
		struct vm_area_struct *vma = vma_lookup(mm, addr);

		if (!vma || vma->vm_flags & (VM_IO | VM_PFNMAP))
			return -EFAULT;
		if (vma->vm_file && vma->vm_flags & VM_MAYSHARE &&
		    !shmem_mapping(vma->vm_file->f_mapping))
			return -EOPNOTSUPP;
		addr = vma->vm_end;
	}
	return 0;
}

/* Process context, no mmap lock held: pin npages pages of the current process from start
 * (page-aligned) with gup_flags (FOLL_LONGTERM, FOLL_WRITE) into pages. The number of
 * pages pinned (the caller unpins a short count), or -EFAULT, -EOPNOTSUPP (see above),
 * or GUP's negative errno.
 */
static inline long o2g_pin_user(unsigned long start, unsigned long npages, unsigned int gup_flags,
				struct page **pages)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = start + npages * PAGE_SIZE;
	long ret;

	if (!npages)
		return 0;
	if (!mm || end <= start)
		return -EFAULT;
	mmap_read_lock(mm);
	ret = o2g_pin_check(mm, start, end);
	if (!ret)
		ret = pin_user_pages(start, npages, gup_flags, pages, NULL);
	mmap_read_unlock(mm);
	return ret;
}

#endif
