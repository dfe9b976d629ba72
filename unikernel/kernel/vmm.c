/*
 * vmm.c: x86_64 4-level page tables.
 *
 * The upper half (PML4 entries 256..511) belongs to the kernel and is the same in every
 * address space: vmm_init() creates each upper-half PDPT it will ever need, so later
 * address spaces (PVAS) copy those 256 entries once and see every kernel mapping made
 * afterwards. The lower half is the applications' (and empty in the kernel's own table).
 *
 * Nothing here unmaps a single page: without a TLB shootdown, another CPU would keep using
 * the old translation (vmm.h, "TLBs").
 */
#include "kernel/vmm.h"
#include "kernel/pmm.h"
#include "kernel/bootinfo.h"
#include "arch/x86_64/x86.h"
#include "arch/x86_64/io.h"
#include "uk/spinlock.h"
#include "uk/power.h"

uint64_t pv_offset;
uint64_t kernel_pml4;

#define IDX(va, lvl)   (((va) >> (12 + 9 * (lvl))) & 511)
#define ADDR_MASK      0x000ffffffffff000ULL
#define PTE_AVL_SHARED 0x200 /* a bit the CPU ignores: "this frame is not ours to free" */

static uint64_t pte_flags(int flags)
{
    uint64_t f = PTE_P;
    if (flags & VM_W)
        f |= PTE_W;
    if (!(flags & VM_X))
        f |= PTE_NX;
    if (flags & VM_UC)
        f |= PTE_PCD | PTE_PWT;
    if (flags & VM_SHARED)
        f |= PTE_AVL_SHARED;
    return f;
}

/* Walk to the table at `level` (0 = page table) for va, creating tables on the way. */
static uint64_t *walk(uint64_t pml4, uint64_t va, int level, int create)
{
    uint64_t *t = phys_ptr(pml4);
    for (int l = 3; l > level; l--) {
        uint64_t *e = &t[IDX(va, l)];
        if (!(*e & PTE_P)) {
            if (!create)
                return 0;
            uint64_t p = pmm_alloc_zeroed();
            if (!p)
                return 0;
            /* Intermediate entries are permissive; the leaf decides. */
            *e = p | PTE_P | PTE_W | (va < DIRECT_MAP_BASE ? PTE_U : 0);
        } else if (*e & PTE_PS) {
            return 0; /* a huge page covers this range */
        }
        t = phys_ptr(*e & ADDR_MASK);
    }
    return t;
}

/* Any context; see vmm.h. */
int vmm_map(uint64_t pml4, uint64_t va, uint64_t pa, int flags)
{
    int huge = flags & VM_HUGE;
    uint64_t *t = walk(pml4, va, huge ? 1 : 0, 1);
    if (!t)
        return -1;
    uint64_t g = va >= DIRECT_MAP_BASE ? PTE_G : 0;
    t[IDX(va, huge ? 1 : 0)] = (pa & ADDR_MASK) | pte_flags(flags) | g | (huge ? PTE_PS : 0);
    if (read_cr3() == pml4 || g)
        invlpg(va);
    return 0;
}

/* Any context; see vmm.h. */
uint64_t vmm_translate(uint64_t pml4, uint64_t va)
{
    uint64_t *t = phys_ptr(pml4);
    for (int l = 3; l >= 0; l--) {
        uint64_t e = t[IDX(va, l)];
        if (!(e & PTE_P))
            return (uint64_t)-1;
        if (l == 0 || (e & PTE_PS)) {
            uint64_t span = 1ULL << (12 + 9 * l);
            return (e & ADDR_MASK & ~(span - 1)) | (va & (span - 1));
        }
        t = phys_ptr(e & ADDR_MASK);
    }
    return (uint64_t)-1;
}

/* Any context. */
int vmm_is_mapped(uint64_t va)
{
    return vmm_translate(read_cr3() & ADDR_MASK, va) != (uint64_t)-1;
}

static void free_table(uint64_t table, int level)
{
    uint64_t *t = phys_ptr(table);
    for (int i = 0; i < 512; i++) {
        if (!(t[i] & PTE_P))
            continue;
        if (level == 0 || (t[i] & PTE_PS)) {
            if (!(t[i] & PTE_AVL_SHARED) && level == 0)
                pmm_free(t[i] & ADDR_MASK);
        } else {
            free_table(t[i] & ADDR_MASK, level - 1);
        }
    }
    pmm_free(table);
}

/* Task context; see vmm.h. */
void vmm_free_lower(uint64_t pml4)
{
    uint64_t *top = phys_ptr(pml4);
    for (int i = 0; i < 256; i++)
        if (top[i] & PTE_P)
            free_table(top[i] & ADDR_MASK, 2);
    pmm_free(pml4);
}

static uint64_t count_tables(uint64_t table, int level, uint64_t va, uint64_t lo, uint64_t hi)
{
    uint64_t *t = phys_ptr(table), n = 1, span = 1ULL << (12 + 9 * level);
    if (level == 0)
        return 1;
    for (int i = 0; i < 512; i++, va += span)
        if ((t[i] & PTE_P) && !(t[i] & PTE_PS) && va < hi && va + span > lo)
            n += count_tables(t[i] & ADDR_MASK, level - 1, va, lo, hi);
    return n;
}

/* Any context; see vmm.h. The top-level table is not counted (every address space has
 * exactly one). */
uint64_t vmm_count_tables(uint64_t pml4, uint64_t lo, uint64_t hi)
{
    uint64_t *top = phys_ptr(pml4), n = 0, span = 1ULL << 39;
    for (uint64_t i = 0; i < 256; i++)
        if ((top[i] & PTE_P) && i * span < hi && (i + 1) * span > lo)
            n += count_tables(top[i] & ADDR_MASK, 2, i * span, lo, hi);
    return n;
}

extern char __text_start[], __rodata_start[], __data_start[], __kernel_end[];

static void map_range(uint64_t va, uint64_t end, int flags)
{
    for (; va < end; va += PAGE_SIZE)
        if (vmm_map(kernel_pml4, va, KIMG_V2P(va), flags))
            panic("out of memory building the kernel page tables");
}

/* Boot only (BSP). */
void vmm_init(void)
{
    kernel_pml4 = pmm_alloc_zeroed();
    uint64_t *top = phys_ptr(kernel_pml4);

    /* Every upper-half PDPT the kernel uses, created now so address spaces can share them. */
    uint64_t shared[] = {KSTACK_BASE, KHEAP_BASE, MMIO_BASE, KERNEL_VIRT_BASE};
    for (unsigned i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (!(top[IDX(shared[i], 3)] & PTE_P))
            top[IDX(shared[i], 3)] = pmm_alloc_zeroed() | PTE_P | PTE_W;

    /* Direct map of RAM (and ACPI memory) in 2 MiB pages. The chunks round out to 2 MiB,
     * so a little non-RAM next to RAM (the legacy VGA hole) is mapped write-back too; we
     * never touch devices through this map (mmio_map() gives uncached mappings). */
    for (int i = 0; i < bootinfo.nregions; i++) {
        const struct memregion *r = &bootinfo.region[i];
        if (r->type != MEM_USABLE && r->type != MEM_ACPI && r->type != MEM_NVS)
            continue;
        uint64_t b = r->base & ~(uint64_t)(HUGE_SIZE - 1);
        for (; b < r->base + r->size && b < DIRECT_MAP_MAX; b += HUGE_SIZE)
            if (vmm_translate(kernel_pml4, DIRECT_MAP_BASE + b) == (uint64_t)-1 &&
                vmm_map(kernel_pml4, DIRECT_MAP_BASE + b, b, VM_W | VM_HUGE))
                panic("out of memory building the direct map");
    }

    /* The kernel image: text read-only and executable, read-only data, then data+bss. */
    map_range((uint64_t)__text_start, (uint64_t)__rodata_start, VM_X);
    map_range((uint64_t)__rodata_start, (uint64_t)__data_start, 0);
    map_range((uint64_t)__data_start, (uint64_t)__kernel_end, VM_W);

    uint64_t cr4;
    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    __asm__ volatile("mov %0, %%cr4" ::"r"(cr4 | CR4_PGE));
    write_cr3(kernel_pml4);
    pv_offset = DIRECT_MAP_BASE;
    pmm_relocate();
}

static spinlock_t mmio_lock = SPINLOCK_INIT;
static uint64_t mmio_next = MMIO_BASE;

/* Task or boot context; see vmm.h. */
void *mmio_map(uint64_t phys, size_t size)
{
    uint64_t off = phys & (PAGE_SIZE - 1);
    uint64_t pages = (off + size + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t f = spin_lock_irqsave(&mmio_lock);
    uint64_t va = mmio_next;
    mmio_next += (pages + 1) * PAGE_SIZE; /* one unmapped page between mappings */
    if (mmio_next > MMIO_BASE + MMIO_MAX)
        panic("MMIO window exhausted");
    for (uint64_t i = 0; i < pages; i++)
        if (vmm_map(kernel_pml4, va + i * PAGE_SIZE, (phys - off) + i * PAGE_SIZE, VM_W | VM_UC))
            panic("out of memory mapping MMIO");
    spin_unlock_irqrestore(&mmio_lock, f);
    return (void *)(va + off);
}
