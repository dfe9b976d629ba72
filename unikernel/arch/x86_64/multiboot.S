/*
 * multiboot.S: the Multiboot1 header, linked only into ukernel-mb.bin (a flat image for
 * GRUB and other Multiboot1 loaders). It is kept out of the PVH ELF on purpose: QEMU's
 * -kernel tries Multiboot before PVH, so a header here would divert QEMU from PVH.
 *
 * Flag 16 ("address fields valid") lets the loader place the flat image without reading
 * ELF headers: load_addr is where the image starts, bss_end_addr where the loader stops
 * zeroing, entry_addr the 32-bit entry in boot.S.
 */
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS ((1 << 1) | (1 << 16)) /* memory map, address fields */

    .section .multiboot, "a"
    .p2align 2
mb_header:
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)
    .long mb_header         /* header_addr */
    .long __image_start     /* load_addr */
    .long __load_end_phys   /* load_end_addr */
    .long __bss_end_phys    /* bss_end_addr */
    .long mb_start          /* entry_addr */
