/*
 * pci.c: see pci.h. Configuration mechanism #1 only (every PC chipset QEMU emulates has
 * it); PCIe extended config space (ECAM) is not needed by any device we drive.
 */
#include "drivers/pci.h"
#include "arch/x86_64/io.h"
#include "kernel/vmm.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/spinlock.h"
#include "memlayout.h"

#define PCI_ADDR_PORT 0xcf8
#define PCI_DATA_PORT 0xcfc

static struct pci_dev pci_devs[PCI_MAX_DEVS];
static int pci_ndevs;
/* The 0xcf8/0xcfc pair is one shared index register: an address write and the data
 * access must not interleave with another CPU's (or an interrupt handler's). */
static spinlock_t pci_cfg_lock = SPINLOCK_INIT;

/* Any context: the CONFIG_ADDRESS value for one dword of config space. */
static uint32_t pci_cfg_addr(int bus, int dev, int fn, int off)
{
    return 0x80000000u | (uint32_t)bus << 16 | (uint32_t)dev << 11 | (uint32_t)fn << 8 |
           (uint32_t)(off & 0xfc);
}

/* Any context: raw 32-bit config read by bus/device/function. */
static uint32_t pci_raw_read32(int bus, int dev, int fn, int off)
{
    uint64_t f = spin_lock_irqsave(&pci_cfg_lock);
    outl(PCI_ADDR_PORT, pci_cfg_addr(bus, dev, fn, off));
    uint32_t v = inl(PCI_DATA_PORT);
    spin_unlock_irqrestore(&pci_cfg_lock, f);
    return v;
}

/* Any context: raw 32-bit config write by bus/device/function. */
static void pci_raw_write32(int bus, int dev, int fn, int off, uint32_t v)
{
    uint64_t f = spin_lock_irqsave(&pci_cfg_lock);
    outl(PCI_ADDR_PORT, pci_cfg_addr(bus, dev, fn, off));
    outl(PCI_DATA_PORT, v);
    spin_unlock_irqrestore(&pci_cfg_lock, f);
}

/* Any context. */
uint32_t pci_read32(const struct pci_dev *d, int off)
{
    return pci_raw_read32(d->bus, d->dev, d->fn, off);
}

/* Any context. */
uint16_t pci_read16(const struct pci_dev *d, int off)
{
    return (uint16_t)(pci_read32(d, off) >> ((off & 2) * 8));
}

/* Any context. */
uint8_t pci_read8(const struct pci_dev *d, int off)
{
    return (uint8_t)(pci_read32(d, off) >> ((off & 3) * 8));
}

/* Any context. */
void pci_write32(const struct pci_dev *d, int off, uint32_t v)
{
    pci_raw_write32(d->bus, d->dev, d->fn, off, v);
}

/* Any context. Read-modify-write of the containing dword: config registers next to a
 * 16-bit one (e.g. the status register, write-1-to-clear) are written back as read, so
 * callers must not use this on dwords holding RW1C bits they do not mean to clear. */
void pci_write16(const struct pci_dev *d, int off, uint16_t v)
{
    int sh = (off & 2) * 8;
    uint32_t old = pci_read32(d, off & ~3);
    if ((off & ~3) == 0x04) /* command/status: never write status back (RW1C) */
        old &= 0x0000ffffu;
    pci_write32(d, off & ~3, (old & ~(0xffffu << sh)) | (uint32_t)v << sh);
}

/* Task or boot context. */
int pci_find_cap(const struct pci_dev *d, int id, int after)
{
    if (!(pci_read16(d, 0x06) & 0x10)) /* status: capability list present */
        return 0;
    int off = after ? pci_read8(d, after + 1) : pci_read8(d, 0x34);
    for (int guard = 0; off >= 0x40 && guard < 48; guard++) {
        off &= 0xfc;
        if (pci_read8(d, off) == id)
            return off;
        off = pci_read8(d, off + 1);
    }
    return 0;
}

/* Boot context: size BAR `i` by writing all ones (decoding is off while we do it). */
static int pci_probe_bar(struct pci_dev *d, int i)
{
    int off = 0x10 + 4 * i;
    uint32_t orig = pci_read32(d, off);
    struct pci_bar *b = &d->bar[i];

    pci_write32(d, off, 0xffffffffu);
    uint32_t mask = pci_read32(d, off);
    pci_write32(d, off, orig);
    if (orig & 1) { /* I/O */
        b->io = 1;
        b->base = orig & ~3u;
        b->size = mask ? (uint32_t)(~(mask & ~3u) + 1) & 0xffff : 0;
        return 1;
    }
    int is64 = ((orig >> 1) & 3) == 2;
    uint64_t base = orig & ~0xfu, m = mask & ~0xfu;
    if (is64 && i < PCI_NBARS - 1) {
        uint32_t orig_hi = pci_read32(d, off + 4);
        pci_write32(d, off + 4, 0xffffffffu);
        uint32_t mask_hi = pci_read32(d, off + 4);
        pci_write32(d, off + 4, orig_hi);
        base |= (uint64_t)orig_hi << 32;
        m |= (uint64_t)mask_hi << 32;
    } else {
        m |= 0xffffffff00000000ull;
    }
    b->prefetch = (orig >> 3) & 1;
    b->base = base;
    b->size = mask ? ~m + 1 : 0;
    return is64 ? 2 : 1;
}

static void pci_scan_bus(int bus, int depth);

/* Boot context: record one function (and scan behind it if it is a bridge). */
static void pci_add(int bus, int dev, int fn, uint32_t id)
{
    if (pci_ndevs >= PCI_MAX_DEVS)
        return;
    struct pci_dev *d = &pci_devs[pci_ndevs++];
    *d = (struct pci_dev){.bus = (uint8_t)bus, .dev = (uint8_t)dev, .fn = (uint8_t)fn};
    d->vendor = (uint16_t)id;
    d->device = (uint16_t)(id >> 16);
    uint32_t cls = pci_read32(d, 0x08);
    d->class = (uint8_t)(cls >> 24);
    d->subclass = (uint8_t)(cls >> 16);
    d->progif = (uint8_t)(cls >> 8);
    uint8_t htype = pci_read8(d, 0x0e) & 0x7f;
    if (htype == 0) {
        /* Decoding off while the BARs are sized (all-ones would briefly claim random
         * addresses), except on bridges: the ISA bridge forwards the console's ports. */
        uint16_t cmd = pci_read16(d, 0x04);
        if (d->class != 0x06)
            pci_write16(d, 0x04, cmd & ~3);
        for (int i = 0; i < PCI_NBARS;)
            i += pci_probe_bar(d, i);
        if (d->class != 0x06)
            pci_write16(d, 0x04, cmd);
        d->subsys_id = pci_read16(d, 0x2e);
        d->irq_line = pci_read8(d, 0x3c);
        d->irq_pin = pci_read8(d, 0x3d);
        d->cap_msix = (uint8_t)pci_find_cap(d, PCI_CAP_MSIX, 0);
        if (d->cap_msix)
            d->msix_entries = (uint16_t)((pci_read16(d, d->cap_msix + 2) & 0x7ff) + 1);
    } else if (htype == 1) {
        int secondary = pci_read8(d, 0x19);
        if (secondary > bus)
            pci_scan_bus(secondary, 1);
    }
}

/* Boot context. */
static void pci_scan_bus(int bus, int depth)
{
    for (int dev = 0; dev < 32; dev++) {
        uint32_t id = pci_raw_read32(bus, dev, 0, 0);
        if ((id & 0xffff) == 0xffff)
            continue;
        int multi = (pci_raw_read32(bus, dev, 0, 0x0c) >> 16) & 0x80;
        pci_add(bus, dev, 0, id);
        for (int fn = 1; multi && fn < 8; fn++) {
            id = pci_raw_read32(bus, dev, fn, 0);
            if ((id & 0xffff) != 0xffff)
                pci_add(bus, dev, fn, id);
        }
    }
}

/* Boot or task context, once. */
void pci_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    pci_scan_bus(0, 0);
}

/* Any context after pci_init(): how many functions were found. */
int pci_count(void)
{
    return pci_ndevs;
}

/* Any context after pci_init(): function i (owned by this file; never freed), or NULL. */
struct pci_dev *pci_get(int i)
{
    return i >= 0 && i < pci_ndevs ? &pci_devs[i] : 0;
}

/* Task or boot context. */
void pci_enable(const struct pci_dev *d)
{
    pci_write16(d, 0x04, pci_read16(d, 0x04) | 0x7); /* I/O, memory, bus master */
}

/* Task or boot context. */
int pci_msix_route(struct pci_dev *d, int entry, int vector, uint32_t apic_id)
{
    if (!d->cap_msix || entry >= d->msix_entries)
        return -1;
    uint32_t tbl = pci_read32(d, d->cap_msix + 4);
    struct pci_bar *b = &d->bar[tbl & 7];
    if (b->io || !b->base)
        return -1;
    /* Mapped once per call: mmio_map hands out fresh virtual space each time, and a
     * device has at most a handful of entries routed at boot. */
    volatile uint32_t *e =
        (volatile uint32_t *)((uint8_t *)mmio_map(b->base, b->size) + (tbl & ~7u) + 16 * entry);
    e[3] = 1; /* masked while it is rewritten */
    e[0] = MSI_ADDR_BASE | (apic_id & 0xff) << 12;
    e[1] = 0;
    e[2] = (uint32_t)vector; /* fixed delivery, edge */
    e[3] = 0;
    uint16_t ctl = pci_read16(d, d->cap_msix + 2);
    pci_write16(d, d->cap_msix + 2, (uint16_t)((ctl | 0x8000) & ~0x4000)); /* enable, unmask all */
    pci_write16(d, 0x04, pci_read16(d, 0x04) | 0x400);                     /* INTx off */
    return 0;
}
