/*
 * bootinfo.c: read the PVH start info or the Multiboot1 or Multiboot2 information into
 * struct bootinfo,
 * and parse the kernel command line (space-separated key=value words).
 */
#include "kernel/bootinfo.h"
#include "uk/power.h"
#include "uk/console.h"
#include "memlayout.h"

struct bootinfo bootinfo;

#define PVH_MAGIC 0x336ec578
struct pvh_start_info {
    uint32_t magic, version, flags, nr_modules;
    uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
    uint32_t memmap_entries, reserved;
};
struct pvh_module {
    uint64_t paddr, size, cmdline_paddr, reserved;
};
struct pvh_memmap {
    uint64_t addr, size;
    uint32_t type, reserved;
};

#define MB_BOOT_MAGIC 0x2BADB002
struct mb_info {
    uint32_t flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
};
struct mb_mod {
    uint32_t start, end, string, reserved;
};
struct mb_mmap {
    uint32_t size;
    uint64_t addr, len;
    uint32_t type;
} __attribute__((packed));

/* Multiboot's mem_upper counts KiB from 1 MiB up (when there is no memory map). */
#define UPPER_MEM_BASE 0x100000

#define MB2_BOOT_MAGIC 0x36d76289
/* Multiboot2 information: a header, then tags, each 8-byte aligned. */
struct mb2_tag {
    uint32_t type, size;
};
#define MB2_TAG_END      0
#define MB2_TAG_CMDLINE  1
#define MB2_TAG_MODULE   3
#define MB2_TAG_MEMINFO  4
#define MB2_TAG_MMAP     6
#define MB2_TAG_ACPI_OLD 14 /* a copy of the ACPI 1.0 RSDP */
#define MB2_TAG_ACPI_NEW 15 /* a copy of the ACPI 2.0+ RSDP (with the XSDT) */
#define MB2_TAG_ALIGN    8
struct mb2_module {
    struct mb2_tag tag;
    uint32_t start, end;
};
struct mb2_mmap {
    struct mb2_tag tag;
    uint32_t entry_size, entry_version;
};
struct mb2_mmap_entry {
    uint64_t addr, len;
    uint32_t type, reserved;
};
struct mb2_meminfo {
    struct mb2_tag tag;
    uint32_t mem_lower, mem_upper;
};

/* The RSDP copy a Multiboot2 loader hands over lives in its information, which the frame
 * allocator may reuse: kept here, in the kernel image (acpi.c reads it by physical
 * address: the image is in the direct map). */
#define RSDP_COPY_MAX 64
static uint8_t rsdp_copy[RSDP_COPY_MAX] __attribute__((aligned(16)));

static void copy_cmdline(uint64_t phys)
{
    const char *s = (const char *)phys;
    int i = 0;
    if (phys)
        for (; s[i] && i < (int)sizeof bootinfo.cmdline - 1; i++)
            bootinfo.cmdline[i] = s[i];
    bootinfo.cmdline[i] = 0;
}

static void add_region(uint64_t base, uint64_t size, uint32_t type)
{
    if (bootinfo.nregions < BOOTINFO_MAX_REGIONS)
        bootinfo.region[bootinfo.nregions++] = (struct memregion){base, size, type};
}

/* Boot only: keep the loader's RSDP copy (a tag's payload of `len` bytes). */
static void keep_rsdp(const void *p, uint32_t len)
{
    if (len > RSDP_COPY_MAX)
        len = RSDP_COPY_MAX;
    for (uint32_t i = 0; i < len; i++)
        rsdp_copy[i] = ((const uint8_t *)p)[i];
    bootinfo.rsdp_phys = KIMG_V2P(rsdp_copy);
}

/* Boot only: the Multiboot2 information at `phys`. The ACPI 2.0 RSDP wins over 1.0's. */
static void parse_mb2(uint64_t phys)
{
    uint32_t total = *(const uint32_t *)phys;
    int have_mmap = 0, have_new_rsdp = 0;
    uint32_t mem_upper_kib = 0;
    bootinfo.loader = "Multiboot2";
    copy_cmdline(0);
    for (uint64_t p = phys + 8; p + sizeof(struct mb2_tag) <= phys + total;) {
        const struct mb2_tag *t = (const void *)p;
        if (t->type == MB2_TAG_END || t->size < sizeof *t)
            break;
        switch (t->type) {
        case MB2_TAG_CMDLINE:
            copy_cmdline(p + sizeof *t);
            break;
        case MB2_TAG_MODULE:
            if (!bootinfo.initrd_size) { /* the first module is the initrd */
                const struct mb2_module *m = (const void *)t;
                bootinfo.initrd_phys = m->start;
                bootinfo.initrd_size = m->end - m->start;
            }
            break;
        case MB2_TAG_MEMINFO:
            mem_upper_kib = ((const struct mb2_meminfo *)t)->mem_upper;
            break;
        case MB2_TAG_MMAP: {
            const struct mb2_mmap *mm = (const void *)t;
            for (uint64_t e = p + sizeof *mm; mm->entry_size && e + mm->entry_size <= p + t->size;
                 e += mm->entry_size) {
                const struct mb2_mmap_entry *me = (const void *)e;
                add_region(me->addr, me->len, me->type);
            }
            have_mmap = 1;
            break;
        }
        case MB2_TAG_ACPI_OLD:
            if (!have_new_rsdp)
                keep_rsdp((const void *)(p + sizeof *t), t->size - sizeof *t);
            break;
        case MB2_TAG_ACPI_NEW:
            keep_rsdp((const void *)(p + sizeof *t), t->size - sizeof *t);
            have_new_rsdp = 1;
            break;
        }
        p += (t->size + MB2_TAG_ALIGN - 1) & ~(uint64_t)(MB2_TAG_ALIGN - 1);
    }
    if (!have_mmap && mem_upper_kib)
        add_region(UPPER_MEM_BASE, (uint64_t)mem_upper_kib * 1024, MEM_USABLE);
}

/* Boot only (identity map of low memory still present). */
void bootinfo_parse(uint32_t kind, uint64_t info_phys, uint32_t mb_magic)
{
    if (kind == BOOT_KIND_PVH) {
        const struct pvh_start_info *si = (const void *)info_phys;
        if (si->magic != PVH_MAGIC)
            panic("PVH start info has bad magic 0x%x", si->magic);
        bootinfo.loader = "PVH";
        copy_cmdline(si->cmdline_paddr);
        if (si->nr_modules) {
            const struct pvh_module *m = (const void *)si->modlist_paddr;
            bootinfo.initrd_phys = m[0].paddr;
            bootinfo.initrd_size = m[0].size;
        }
        if (si->version >= 1) {
            bootinfo.rsdp_phys = si->rsdp_paddr;
            const struct pvh_memmap *mm = (const void *)si->memmap_paddr;
            for (uint32_t i = 0; i < si->memmap_entries; i++)
                add_region(mm[i].addr, mm[i].size, mm[i].type);
        }
    } else if (kind == BOOT_KIND_MB && mb_magic == MB2_BOOT_MAGIC) {
        parse_mb2(info_phys);
    } else if (kind == BOOT_KIND_MB) {
        if (mb_magic != MB_BOOT_MAGIC)
            panic("Multiboot loader passed bad magic 0x%x", mb_magic);
        const struct mb_info *mi = (const void *)info_phys;
        bootinfo.loader = "Multiboot";
        copy_cmdline(mi->flags & (1 << 2) ? mi->cmdline : 0);
        if ((mi->flags & (1 << 3)) && mi->mods_count) {
            const struct mb_mod *m = (const void *)(uint64_t)mi->mods_addr;
            bootinfo.initrd_phys = m[0].start;
            bootinfo.initrd_size = m[0].end - m[0].start;
        }
        if (mi->flags & (1 << 6)) {
            uint64_t p = mi->mmap_addr, end = p + mi->mmap_length;
            while (p < end) {
                const struct mb_mmap *e = (const void *)p;
                add_region(e->addr, e->len, e->type);
                p += e->size + 4;
            }
        } else if (mi->flags & 1) {
            add_region(UPPER_MEM_BASE, (uint64_t)mi->mem_upper * 1024, MEM_USABLE);
        }
    } else {
        panic("unknown boot path %u", kind);
    }
    if (!bootinfo.nregions)
        panic("the boot loader gave no memory map");
}

/* Find `key=` as a whole word; returns a pointer to the value or 0. */
static const char *find_key(const char *key)
{
    const char *s = bootinfo.cmdline;
    int klen = 0;
    while (key[klen])
        klen++;
    while (*s) {
        while (*s == ' ')
            s++;
        int i = 0;
        while (i < klen && s[i] == key[i])
            i++;
        if (i == klen && (s[i] == '=' || s[i] == ' ' || !s[i]))
            return s[i] == '=' ? s + i + 1 : s + i;
        while (*s && *s != ' ')
            s++;
    }
    return 0;
}

/* Any context after boot. */
int cmdline_get(const char *key, char *out, int size)
{
    const char *v = find_key(key);
    if (!v)
        return 0;
    int i = 0;
    for (; v[i] && v[i] != ' ' && i < size - 1; i++)
        out[i] = v[i];
    if (size > 0)
        out[i] = 0;
    return 1;
}

/* Any context after boot. */
uint64_t cmdline_get_u64(const char *key, uint64_t def)
{
    char buf[32];
    if (!cmdline_get(key, buf, sizeof buf) || !buf[0])
        return def;
    uint64_t v = 0;
    int i = 0, base = 10;
    if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
        base = 16;
        i = 2;
    }
    for (;; i++) {
        char c = buf[i];
        int d = c >= '0' && c <= '9'                 ? c - '0'
                : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                     : -1;
        if (d < 0)
            break;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    switch (buf[i]) {
    case 'k':
    case 'K':
        v <<= 10;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        break;
    }
    return v;
}
