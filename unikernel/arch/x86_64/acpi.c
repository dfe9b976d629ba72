/*
 * acpi.c: find the RSDP (from the boot loader, else the BIOS areas), walk the RSDT/XSDT to
 * the MADT and collect local APICs (type 0 and x2APIC type 9), the first I/O APIC and the
 * ISA interrupt source overrides; hand the SRAT and SLIT to numa.c. Checksums are verified; a bad table is ignored loudly.
 */
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/numa.h"
#include "kernel/bootinfo.h"
#include "kernel/vmm.h"
#include "uk/console.h"

struct acpi_info acpi;

/* MADT entry types we read (ACPI 6.5, table 5.21). */
#define MADT_LAPIC    0
#define MADT_X2APIC   9
#define XAPIC_ID_NONE 0xff /* a type-0 entry with id 0xff stands for no CPU */

struct sdt_header {
    char sig[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem[6], oem_table[8];
    uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));

struct rsdp {
    char sig[8];
    uint8_t checksum;
    char oem[6];
    uint8_t revision;
    uint32_t rsdt;
    uint32_t length;
    uint64_t xsdt;
    uint8_t xchecksum, rsv[3];
} __attribute__((packed));

/* ACPI tables live in RAM the direct map may not cover (QEMU marks them reserved). */
static void *acpi_ptr(uint64_t phys, uint64_t len)
{
    if (vmm_translate(kernel_pml4, (uint64_t)P2V(phys)) != (uint64_t)-1 &&
        vmm_translate(kernel_pml4, (uint64_t)P2V(phys + len - 1)) != (uint64_t)-1)
        return P2V(phys);
    return mmio_map(phys, len);
}

static int sum_ok(const void *p, uint32_t len)
{
    uint8_t s = 0;
    for (uint32_t i = 0; i < len; i++)
        s += ((const uint8_t *)p)[i];
    return s == 0;
}

static int sig_is(const char *a, const char *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static uint64_t scan_rsdp(uint64_t base, uint64_t len)
{
    const char *p = acpi_ptr(base, len);
    for (uint64_t off = 0; off + 20 <= len; off += 16)
        if (sig_is(p + off, "RSD PTR ", 8) && sum_ok(p + off, 20))
            return base + off;
    return 0;
}

static const struct sdt_header *map_table(uint64_t phys)
{
    const struct sdt_header *h = acpi_ptr(phys, sizeof *h);
    if (h->length < sizeof *h || h->length > (1 << 20))
        return 0;
    h = acpi_ptr(phys, h->length);
    return sum_ok(h, h->length) ? h : 0;
}

/* One enabled CPU of the MADT. Firmware may list a CPU twice (type 0 and type 9 for ids
 * below 255): kept once. Ids above MAX_APIC_ID (the board's limit, sizing smp.c's
 * table) or beyond MAX_CPUS CPUs are counted, not kept. */
static void add_cpu(uint32_t apic_id)
{
    for (int i = 0; i < acpi.ncpus; i++)
        if (acpi.cpu_apic_id[i] == apic_id)
            return; /* the boot CPU ([0]) or a second entry for one CPU */
    if (acpi.ncpus >= MAX_CPUS || apic_id > MAX_APIC_ID) {
        acpi.cpus_ignored++;
        return;
    }
    acpi.cpu_apic_id[acpi.ncpus++] = apic_id;
    if (apic_id > acpi.max_apic_id)
        acpi.max_apic_id = apic_id;
}

static void parse_madt(const struct sdt_header *h)
{
    const uint8_t *p = (const uint8_t *)h;
    acpi.lapic_phys = *(const uint32_t *)(p + 36);
    for (uint32_t off = 44; off + 2 <= h->length && p[off + 1] >= 2; off += p[off + 1]) {
        const uint8_t *e = p + off;
        switch (e[0]) {
        case MADT_LAPIC: /* flags bit 0 enabled, bit 1 online capable */
            if ((*(const uint32_t *)(e + 4) & 3) && e[3] != XAPIC_ID_NONE)
                add_cpu(e[3]);
            break;
        case MADT_X2APIC: /* ids of 255 and above, or every CPU on x2APIC firmware */
            if (*(const uint32_t *)(e + 8) & 3)
                add_cpu(*(const uint32_t *)(e + 4));
            break;
        case 1: /* I/O APIC */
            if (!acpi.ioapic_phys) {
                acpi.ioapic_phys = *(const uint32_t *)(e + 4);
                acpi.ioapic_gsi_base = *(const uint32_t *)(e + 8);
            }
            break;
        case 2: /* interrupt source override */
            if (e[3] < 16) {
                acpi.isa_gsi[e[3]] = *(const uint32_t *)(e + 4);
                acpi.isa_flags[e[3]] = *(const uint16_t *)(e + 8);
            }
            break;
        case 5: /* local APIC address override */
            acpi.lapic_phys = *(const uint64_t *)(e + 4);
            break;
        }
    }
}

/* Boot only (BSP). */
void acpi_init(uint32_t bsp_apic_id)
{
    acpi.ncpus = 1;
    acpi.cpu_apic_id[0] = bsp_apic_id;
    acpi.max_apic_id = bsp_apic_id;
    acpi.lapic_phys = 0xfee00000;
    for (int i = 0; i < 16; i++)
        acpi.isa_gsi[i] = (uint32_t)i;

    uint64_t rsdp_phys = bootinfo.rsdp_phys;
    if (!rsdp_phys) {
        uint64_t ebda = (uint64_t) * (const uint16_t *)P2V(0x40e) << 4;
        if (ebda)
            rsdp_phys = scan_rsdp(ebda, 1024);
        if (!rsdp_phys)
            rsdp_phys = scan_rsdp(0xe0000, 0x20000);
    }
    if (!rsdp_phys) {
        kprintf("acpi: no RSDP found: running on the boot CPU only\n");
        acpi.ioapic_phys = 0xfec00000;
        numa_finish();
        return;
    }
    const struct rsdp *r = acpi_ptr(rsdp_phys, sizeof *r);
    const struct sdt_header *root;
    int wide = r->revision >= 2 && r->xsdt;
    root = map_table(wide ? r->xsdt : r->rsdt);
    if (!root) {
        kprintf("acpi: bad root table: running on the boot CPU only\n");
        numa_finish();
        return;
    }
    int n = (int)((root->length - sizeof *root) / (wide ? 8 : 4));
    const uint8_t *ents = (const uint8_t *)(root + 1);
    const struct sdt_header *madt = 0;
    for (int i = 0; i < n; i++) {
        uint64_t phys =
            wide ? *(const uint64_t *)(ents + 8 * i) : *(const uint32_t *)(ents + 4 * i);
        const struct sdt_header *h = map_table(phys);
        if (h && sig_is(h->sig, "APIC", 4))
            madt = h;
        else if (h && sig_is(h->sig, "SRAT", 4))
            numa_parse_srat((const uint8_t *)h, h->length);
        else if (h && sig_is(h->sig, "SLIT", 4))
            numa_parse_slit((const uint8_t *)h, h->length);
    }
    if (madt)
        parse_madt(madt);
    else
        kprintf("acpi: no MADT: running on the boot CPU only\n");
    numa_finish();
}
