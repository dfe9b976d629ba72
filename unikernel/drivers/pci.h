/*
 * pci.h: PCI enumeration through configuration mechanism #1 (ports 0xcf8/0xcfc): the
 * functions found at boot, their BARs and capabilities, and MSI / MSI-X set-up.
 */
#ifndef UK_PCI_H
#define UK_PCI_H
#include <stdint.h>

#define PCI_MAX_DEVS 64
#define PCI_NBARS    6

/* Capability ids (PCI Local Bus 3.0, appendix H). */
#define PCI_CAP_VENDOR 0x09
#define PCI_CAP_MSIX   0x11

struct pci_bar {
    uint64_t base; /* physical address (memory BAR) or port number (I/O BAR); 0 if absent */
    uint64_t size;
    int io; /* 1: I/O space */
    int prefetch;
};

struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device, subsys_id;
    uint8_t class, subclass, progif, irq_line, irq_pin;
    struct pci_bar bar[PCI_NBARS];
    uint8_t cap_msix; /* config-space offset of the MSI-X capability, 0 if none */
    uint16_t msix_entries;
};

/* Boot or task context, once: scan bus 0 and every bus behind a PCI-PCI bridge. */
void pci_init(void);
int pci_count(void);
struct pci_dev *pci_get(int i);

/* Any context; callers serialise accesses to one function. Config space accessors. */
uint32_t pci_read32(const struct pci_dev *d, int off);
uint16_t pci_read16(const struct pci_dev *d, int off);
uint8_t pci_read8(const struct pci_dev *d, int off);
void pci_write32(const struct pci_dev *d, int off, uint32_t v);
void pci_write16(const struct pci_dev *d, int off, uint16_t v);

/* Task or boot context. Offset of the first (after = 0) or next capability `id`, or 0. */
int pci_find_cap(const struct pci_dev *d, int id, int after);
/* Task or boot context. Enable I/O and memory decoding and bus mastering (DMA). */
void pci_enable(const struct pci_dev *d);

/* Task or boot context. Program MSI-X table entry `entry` to deliver `vector` (edge,
 * fixed) to the CPU with `apic_id`, unmask it, and enable MSI-X (INTx off). Maps the
 * table's BAR on first use. Returns 0, or -1 if the function has no MSI-X. */
int pci_msix_route(struct pci_dev *d, int entry, int vector, uint32_t apic_id);

#endif
