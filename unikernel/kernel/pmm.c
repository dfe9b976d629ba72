/*
 * pmm.c: physical frames. A bitmap (1 = in use) over all physical memory up to the end of
 * the highest usable region, with a next-fit hint. The bitmap itself lives in the first
 * usable region below 4 GiB that can hold it (reached through the boot identity map until
 * pmm_relocate()). Allocation by NUMA node scans only the SRAT's ranges of that node, with
 * a next-fit hint per node.
 */
#include "kernel/pmm.h"
#include "kernel/bootinfo.h"
#include "kernel/vmm.h"
#include "arch/x86_64/numa.h"
#include "uk/spinlock.h"
#include "uk/power.h"
#include "memlayout.h"

extern char __kernel_end[];

static uint64_t *bitmap;
static uint64_t bitmap_phys, bitmap_bytes;
static uint64_t nframes, nfree, ntotal, hint;
static uint64_t node_hint[NUMA_MAX_NODES]; /* next frame to look at, per node */
static spinlock_t pmm_lock = SPINLOCK_INIT;

static inline int used(uint64_t f)
{
    return (bitmap[f / 64] >> (f % 64)) & 1;
}
static inline void set_used(uint64_t f)
{
    bitmap[f / 64] |= 1ULL << (f % 64);
}
static inline void set_free(uint64_t f)
{
    bitmap[f / 64] &= ~(1ULL << (f % 64));
}

static void mark_range(uint64_t base, uint64_t end, int use)
{
    for (uint64_t f = base / PAGE_SIZE; f < end / PAGE_SIZE && f < nframes; f++) {
        if (use && !used(f)) {
            set_used(f);
            nfree--;
        } else if (!use && used(f)) {
            set_free(f);
            nfree++;
        }
    }
}

/* Boot only. */
void pmm_init(void)
{
    uint64_t top = 0;
    for (int i = 0; i < bootinfo.nregions; i++) {
        const struct memregion *r = &bootinfo.region[i];
        if (r->type == MEM_USABLE && r->base + r->size > top)
            top = r->base + r->size;
    }
    nframes = top / PAGE_SIZE;
    bitmap_bytes = ((nframes + 63) / 64) * 8;

    uint64_t kend = KIMG_V2P(__kernel_end);
    uint64_t iend = bootinfo.initrd_phys + bootinfo.initrd_size;
    for (int i = 0; i < bootinfo.nregions && !bitmap_phys; i++) {
        const struct memregion *r = &bootinfo.region[i];
        if (r->type != MEM_USABLE)
            continue;
        uint64_t b = (r->base + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        if (b < kend)
            b = kend;
        if (bootinfo.initrd_size && b < iend && b + bitmap_bytes > bootinfo.initrd_phys)
            b = (iend + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        if (b + bitmap_bytes <= r->base + r->size && b + bitmap_bytes <= 0x100000000ULL)
            bitmap_phys = b;
    }
    if (!bitmap_phys)
        panic("no room below 4 GiB for the frame bitmap (%lu bytes)", bitmap_bytes);
    bitmap = (uint64_t *)bitmap_phys; /* identity-mapped during boot */
    for (uint64_t i = 0; i < bitmap_bytes / 8; i++)
        bitmap[i] = ~0ULL;

    for (int i = 0; i < bootinfo.nregions; i++) {
        const struct memregion *r = &bootinfo.region[i];
        if (r->type != MEM_USABLE)
            continue;
        uint64_t b = (r->base + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        uint64_t e = (r->base + r->size) & ~(uint64_t)(PAGE_SIZE - 1);
        if (e > b) {
            mark_range(b, e, 0);
            ntotal += (e - b) / PAGE_SIZE;
        }
    }
    /* Low 1 MiB (BIOS data, the AP trampoline page), the kernel, the initrd, the bitmap. */
    mark_range(0, 0x100000, 1);
#ifdef BOARD_HOSTED
    /* The loader's part of the reserved range (start info, console ring): not ours. */
    mark_range(HOSTED_BASE, KERNEL_PHYS_BASE, 1);
#endif
    mark_range(KERNEL_PHYS_BASE, kend, 1);
    if (bootinfo.initrd_size)
        mark_range(bootinfo.initrd_phys & ~(uint64_t)(PAGE_SIZE - 1), iend + PAGE_SIZE - 1, 1);
    mark_range(bitmap_phys, bitmap_phys + bitmap_bytes + PAGE_SIZE - 1, 1);
}

/* Boot only. */
void pmm_relocate(void)
{
    bitmap = P2V(bitmap_phys);
}

/* Any context. */
uint64_t pmm_alloc(void)
{
    uint64_t f = spin_lock_irqsave(&pmm_lock), phys = 0;
    for (uint64_t n = 0; n < nframes && nfree; n++) {
        uint64_t i = (hint + n) % nframes;
        if (bitmap[i / 64] == ~0ULL) { /* skip a full word at once */
            n += 63 - i % 64;
            continue;
        }
        if (!used(i)) {
            set_used(i);
            nfree--;
            hint = i + 1;
            phys = i * PAGE_SIZE;
            break;
        }
    }
    spin_unlock_irqrestore(&pmm_lock, f);
    return phys;
}

/* pmm_lock held. The first free frame in frames [lo, hi), marked used; 0 if none. */
static uint64_t take_in(uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi; i++) {
        if (i % 64 == 0 && i + 64 <= hi && bitmap[i / 64] == ~0ULL) {
            i += 63; /* a full word at once */
            continue;
        }
        if (!used(i)) {
            set_used(i);
            nfree--;
            return i;
        }
    }
    return 0;
}

/* Any context; see pmm.h. Two passes over the node's ranges: from its hint to their end,
 * then from their start (frame 0 is never free: low memory is reserved at boot). */
uint64_t pmm_alloc_node(int node)
{
    if (node < 0 || node >= NUMA_MAX_NODES)
        return 0;
    uint64_t f = spin_lock_irqsave(&pmm_lock), got = 0;
    for (int pass = 0; pass < 2 && !got; pass++)
        for (int r = 0; r < numa.nranges && !got; r++) {
            if (numa.range[r].node != node)
                continue;
            uint64_t lo = numa.range[r].base / PAGE_SIZE, hi = numa.range[r].end / PAGE_SIZE;
            if (hi > nframes)
                hi = nframes;
            if (pass == 0 && node_hint[node] > lo)
                lo = node_hint[node];
            got = lo < hi ? take_in(lo, hi) : 0;
        }
    if (got)
        node_hint[node] = got + 1;
    spin_unlock_irqrestore(&pmm_lock, f);
    return got * PAGE_SIZE;
}

/* Any context; see pmm.h. */
uint64_t pmm_node_free_frames(int node)
{
    uint64_t f = spin_lock_irqsave(&pmm_lock), n = 0;
    for (int r = 0; r < numa.nranges; r++)
        if (numa.range[r].node == node)
            for (uint64_t i = numa.range[r].base / PAGE_SIZE;
                 i < numa.range[r].end / PAGE_SIZE && i < nframes; i++)
                n += !used(i);
    spin_unlock_irqrestore(&pmm_lock, f);
    return n;
}

/* Any context. */
uint64_t pmm_alloc_zeroed(void)
{
    uint64_t p = pmm_alloc();
    if (p) {
        uint64_t *q = phys_ptr(p);
        for (int i = 0; i < PAGE_SIZE / 8; i++)
            q[i] = 0;
    }
    return p;
}

/* Any context. First fit. */
uint64_t pmm_alloc_contig(uint64_t n)
{
    uint64_t f = spin_lock_irqsave(&pmm_lock), phys = 0;
    for (uint64_t i = 0x100000 / PAGE_SIZE; i + n <= nframes && !phys; i++) {
        uint64_t k = 0;
        while (k < n && !used(i + k))
            k++;
        if (k == n) {
            for (k = 0; k < n; k++)
                set_used(i + k);
            nfree -= n;
            phys = i * PAGE_SIZE;
        } else {
            i += k;
        }
    }
    spin_unlock_irqrestore(&pmm_lock, f);
    return phys;
}

/* Any context. Freeing a frame that is not in use is a kernel bug: panic. */
void pmm_free(uint64_t phys)
{
    pmm_free_contig(phys, 1);
}

/* Any context. */
void pmm_free_contig(uint64_t phys, uint64_t n)
{
    uint64_t f = spin_lock_irqsave(&pmm_lock);
    for (uint64_t i = phys / PAGE_SIZE; i < phys / PAGE_SIZE + n; i++) {
        if (i >= nframes || !used(i)) {
            spin_unlock_irqrestore(&pmm_lock, f);
            panic("pmm_free of frame 0x%lx that is not allocated", i * PAGE_SIZE);
        }
        set_free(i);
        nfree++;
    }
    spin_unlock_irqrestore(&pmm_lock, f);
}

uint64_t pmm_free_frames(void)
{
    return __atomic_load_n(&nfree, __ATOMIC_RELAXED);
}

uint64_t pmm_total_frames(void)
{
    return ntotal;
}
