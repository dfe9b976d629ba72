/* bootinfo.h: what the boot loader told us, copied out of its structures at boot. */
#ifndef UK_BOOTINFO_H
#define UK_BOOTINFO_H
#include <stdint.h>

#define BOOT_KIND_PVH 1
#define BOOT_KIND_MB  2

#define MEM_USABLE   1
#define MEM_RESERVED 2
#define MEM_ACPI     3
#define MEM_NVS      4

struct memregion {
    uint64_t base, size;
    uint32_t type;
};

#define BOOTINFO_MAX_REGIONS 64

struct bootinfo {
    const char *loader; /* "PVH", "Multiboot" or "Multiboot2" */
    char cmdline[1024];
    int nregions;
    struct memregion region[BOOTINFO_MAX_REGIONS];
    uint64_t initrd_phys, initrd_size; /* 0 if none */
    uint64_t rsdp_phys;                /* 0 if the loader did not say */
};

extern struct bootinfo bootinfo;

/* Boot only, while low memory is still identity-mapped. */
void bootinfo_parse(uint32_t kind, uint64_t info_phys, uint32_t mb_magic);
/* Any context after boot. The value of `key=value` on the command line, copied into `out`
 * (at most `size`-1 characters); returns 1 if the key is present. */
int cmdline_get(const char *key, char *out, int size);
/* As cmdline_get, as an unsigned number with an optional K/M/G suffix; `def` if absent. */
uint64_t cmdline_get_u64(const char *key, uint64_t def);

#endif
