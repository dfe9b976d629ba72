/*
 * pvas_images.c: crafted application images for the loader (unikernel/pvas/), built from
 * the host's <elf.h> (not the kernel's pvas_elf.h, so that a mistake there shows).
 *
 *   pvas-images DIR        writes DIR/elf_* : one valid static-PIE image and variants of
 *                          it, each broken in one way (the comment above each says how and
 *                          what the loader must do); tests/uk/cases/loader_*.case run them
 *                          through qemu/ukrun, tests/fuzz/run.sh seeds pvas_fuzz_image
 *   pvas-images --cpio DIR writes DIR/cpio_* : initrd archives (cpio newc), a good one and
 *                          broken ones, the seeds of cpio_fuzz
 *
 * The valid image is as small as a static-PIE can be: a text segment (headers, code,
 * symbol table) and a writable one (dynamic section, one word, the relocation table, a
 * page of bss). Its code checks that the loader applied its one R_X86_64_RELATIVE
 * relocation and exits through the kernel's ABI table with 0 (applied) or 1.
 */
#include "uk/abi.h"
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* File layout = memory layout (offsets are addresses, the image is linked at 0). */
#define PAGE        0x1000
#define CODE_VA     0x100 /* _start */
#define SYMTAB_OFF  0x200 /* 2 symbols: the null one, _start */
#define STRTAB_OFF  0x240
#define SHDR_OFF    0x280  /* 3 sections: null, .symtab, .strtab */
#define DATA_VA     0x1000 /* the writable segment: */
#define DYN_OFF     0x1000 /*   dynamic section (DYN_N entries) */
#define WORD_VA     0x1800 /*   the word the relocation sets to _start */
#define RELA_OFF    0x1fe8 /*   relocation table (1 entry), last in the file */
#define DATA_FILESZ 0x1000
#define DATA_MEMSZ  0x2000 /* a page of bss */
#define FILE_END    0x2000
#define FILE_MAX    0x3000
#define NPHDR       3
#define DYN_N       4
#define UD2_VA      (CODE_VA + 0x1d) /* the ud2 after the exit call */
#define START_SIZE  0x1f

static _Alignas(16) uint8_t img[FILE_MAX];
static size_t len;

#define EH      ((Elf64_Ehdr *)img)
#define PH      ((Elf64_Phdr *)(img + sizeof(Elf64_Ehdr)))
#define DYN     ((Elf64_Dyn *)(img + DYN_OFF))
#define RELA    ((Elf64_Rela *)(img + RELA_OFF))
#define SHDR    ((Elf64_Shdr *)(img + SHDR_OFF))
#define SYM     ((Elf64_Sym *)(img + SYMTAB_OFF))
#define PH_DATA 1 /* program header index of the writable segment */
#define PH_DYN  2

/* main thread: little-endian 32-bit store into the code. */
static uint8_t *put32(uint8_t *p, int32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

/* main thread: _start(abi = rdi, ...): abi->exit(word == &_start ? 0 : 1). Position
 * independent: both addresses come from rip. */
static void emit_code(void)
{
    uint8_t *p = img + CODE_VA;
    static const uint8_t mov_rdx_rdi[] = {0x48, 0x89, 0xfa}; /* mov rdx, rdi */
    static const uint8_t lea_rax[] = {0x48, 0x8d, 0x05};     /* lea rax, [rip + d32] */
    static const uint8_t mov_rcx[] = {0x48, 0x8b, 0x0d};     /* mov rcx, [rip + d32] */
    static const uint8_t tail[] = {
        0x31, 0xff,       /* xor edi, edi */
        0x48, 0x39, 0xc8, /* cmp rax, rcx */
        0x40, 0x0f, 0x95,
        0xc7,                                               /* setne dil */
        0xff, 0x52, (uint8_t)offsetof(struct uk_abi, exit), /* call [rdx + exit] */
        0x0f, 0x0b,                                         /* ud2 */
    };
    memcpy(p, mov_rdx_rdi, 3);
    p += 3;
    memcpy(p, lea_rax, 3);
    p = put32(p + 3, (int32_t)(CODE_VA - (p + 7 - img)));
    memcpy(p, mov_rcx, 3);
    p = put32(p + 3, (int32_t)(WORD_VA - (p + 7 - img)));
    memcpy(p, tail, sizeof tail);
    p += sizeof tail;
    if (p - img != CODE_VA + START_SIZE || p - img - 2 != UD2_VA) {
        fprintf(stderr, "pvas-images: code layout changed\n");
        exit(1);
    }
}

/* main thread: the valid image into img[0..len). */
static void base(void)
{
    memset(img, 0, sizeof img);
    len = FILE_END;
    Elf64_Ehdr *eh = EH;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_DYN;
    eh->e_machine = EM_X86_64;
    eh->e_version = EV_CURRENT;
    eh->e_entry = CODE_VA;
    eh->e_phoff = sizeof(Elf64_Ehdr);
    eh->e_shoff = SHDR_OFF;
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = NPHDR;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = 3;
    PH[0] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, 0, 0, 0, DATA_VA, DATA_VA, PAGE};
    PH[PH_DATA] = (Elf64_Phdr){PT_LOAD, PF_R | PF_W, DATA_VA,    DATA_VA,
                               DATA_VA, DATA_FILESZ, DATA_MEMSZ, PAGE};
    PH[PH_DYN] = (Elf64_Phdr){PT_DYNAMIC,          PF_R | PF_W,         DYN_OFF, DYN_OFF, DYN_OFF,
                              DYN_N * sizeof *DYN, DYN_N * sizeof *DYN, 8};
    DYN[0] = (Elf64_Dyn){DT_RELA, {RELA_OFF}};
    DYN[1] = (Elf64_Dyn){DT_RELASZ, {sizeof(Elf64_Rela)}};
    DYN[2] = (Elf64_Dyn){DT_RELAENT, {sizeof(Elf64_Rela)}};
    DYN[3] = (Elf64_Dyn){DT_NULL, {0}};
    RELA[0] = (Elf64_Rela){WORD_VA, ELF64_R_INFO(0, R_X86_64_RELATIVE), CODE_VA};
    emit_code();
    static const char strtab[] = "\0_start";
    memcpy(img + STRTAB_OFF, strtab, sizeof strtab);
    SYM[1] = (Elf64_Sym){1, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, CODE_VA, START_SIZE};
    SHDR[1] = (Elf64_Shdr){0, SHT_SYMTAB, 0, 0, SYMTAB_OFF, 2 * sizeof *SYM, 2, 1, 8, sizeof *SYM};
    SHDR[2] = (Elf64_Shdr){0, SHT_STRTAB, 0, 0, STRTAB_OFF, sizeof strtab, 0, 0, 1, 0};
}

/* The variants. Each comment says what the loader must do with it. */

/* Loads and runs: exit 0. */
static void elf_ok(void) {}

/* Loads, then faults at the ud2 of _start: the report names <_start+0x1d>. */
static void elf_fault_symbols(void)
{
    EH->e_entry = UD2_VA;
}

/* Issue 15 defect 1: a relocation 7 bytes below the image base (offset + 8 wraps to 1):
 * "relocation 0 writes outside writable memory". */
static void elf_rela_below_base(void)
{
    RELA[0].r_offset = 0xfffffffffffffff9ULL;
}

/* Issue 15 defect 2: DT_RELA + DT_RELASZ wraps around 2^64 to a small address inside the
 * writable segment, with the size a whole number of entries: "bad relocation table". */
static void elf_rela_table_wraps(void)
{
    uint64_t sz = 0 - (uint64_t)RELA_OFF;
    while (sz % sizeof(Elf64_Rela))
        sz++;
    DYN[1].d_un.d_val = sz;
}

/* Issue 15 defect 2: the dynamic section at an odd offset (misaligned reads): it is read
 * byte-wise, so the image loads and runs: exit 0. */
static void elf_dyn_misaligned(void)
{
    memmove(img + DYN_OFF + 1, img + DYN_OFF, DYN_N * sizeof *DYN);
    PH[PH_DYN].p_offset = PH[PH_DYN].p_vaddr = PH[PH_DYN].p_paddr = DYN_OFF + 1;
}

/* A relocation table that is not a whole number of entries: "bad relocation table". */
static void elf_rela_size_ragged(void)
{
    DYN[1].d_un.d_val = sizeof(Elf64_Rela) + 1;
}

/* A relocation into the read-only text: "writes outside writable memory". */
static void elf_rela_in_text(void)
{
    RELA[0].r_offset = CODE_VA;
}

/* A relocation whose last bytes pass the writable segment's end. */
static void elf_rela_past_end(void)
{
    RELA[0].r_offset = DATA_VA + DATA_MEMSZ - 4;
}

/* A relocation of another type: "relocation 0 has type 1". */
static void elf_rela_type(void)
{
    RELA[0].r_info = ELF64_R_INFO(0, R_X86_64_64);
}

/* The entry point in the writable segment (not executable): "no executable segment holds
 * the entry point" (before: the rank faulted on a non-executable page). */
static void elf_entry_in_data(void)
{
    EH->e_entry = WORD_VA;
}

/* The entry point past the image. */
static void elf_entry_past_end(void)
{
    EH->e_entry = 0xfffffffffffffff0ULL;
}

/* The program header table at an offset that wraps: "bad program header table". */
static void elf_phdr_wraps(void)
{
    EH->e_phoff = 0xfffffffffffffff0ULL;
}

/* A segment whose address + size wraps: "segment 1 is malformed or too large". */
static void elf_segment_wraps(void)
{
    PH[PH_DATA].p_vaddr = 0xfffffffffffff000ULL;
}

/* A segment whose file bytes pass the file's end. */
static void elf_segment_past_file(void)
{
    PH[PH_DATA].p_filesz = 0xffffffffffffff00ULL;
    PH[PH_DATA].p_memsz = 0xffffffffffffff00ULL;
}

/* The dynamic section past the file's end: "bad dynamic section". */
static void elf_dyn_past_file(void)
{
    PH[PH_DYN].p_offset = 0xfffffffffffffff8ULL;
}

/* Section headers at an offset that wraps: loads without symbols (exit 0). */
static void elf_shdr_wraps(void)
{
    EH->e_shoff = 0xffffffffffffffc0ULL;
}

/* The symbol table's size wraps past the file: loads without symbols (exit 0). */
static void elf_symtab_wraps(void)
{
    SHDR[1].sh_size = 0 - (uint64_t)SYMTAB_OFF;
}

/* Loads, then faults like elf_fault_symbols, but its string table (moved to the end of the
 * file, whose size stays a multiple of 4: no cpio padding after it) lacks its final NUL:
 * the report must not print a name that runs on into the initrd ("070701...TRAILER!!!"),
 * so the image has no symbols. */
static void elf_strtab_unterminated(void)
{
    static const char strtab[] = {0, 0, 0, 0, 0, '_', 's', 't', 'a', 'r', 't', 'x'};
    EH->e_entry = UD2_VA;
    memcpy(img + len, strtab, sizeof strtab);
    SHDR[2].sh_offset = len;
    SHDR[2].sh_size = sizeof strtab;
    SYM[1].st_name = 5;
    len += sizeof strtab;
}

/* Faults like elf_fault_symbols, with _start's value + size wrapping around 2^64: the
 * report still names <_start+0x1d> (the lookup never forms that sum). */
static void elf_sym_size_wraps(void)
{
    EH->e_entry = UD2_VA;
    SYM[1].st_size = 0 - (uint64_t)CODE_VA + 0x10;
}

/* Faults like elf_fault_symbols, with the symbol table at an odd offset (read byte-wise:
 * the report names <_start+0x1d>). */
static void elf_symtab_misaligned(void)
{
    EH->e_entry = UD2_VA;
    memmove(img + SYMTAB_OFF + 1, img + SYMTAB_OFF, 2 * sizeof *SYM);
    SHDR[1].sh_offset = SYMTAB_OFF + 1;
}

/* Not the loader's but its neighbour's (pvas_load.c: pvas_sbrk), run as 2 ranks on one
 * CPU: _start calls abi->sbrk(INTPTR_MIN), whose brk + incr wraps, then sbrk(32 MiB), and
 * exits with 2 if the first was not refused (-1), | 1 if the second failed. Before, the
 * wrapped break passed as growth and the first rank mapped all free memory into its heap
 * (sbrk runs in the kernel, not preempted) before failing: the second rank's 32 MiB
 * failed, exit 1. */
static void elf_sbrk_wraps(void)
{
    static const uint8_t code[] = {
        0x53,             /* push rbx (aligns rsp) */
        0x48, 0x89, 0xfb, /* mov rbx, rdi (abi) */
        0x48, 0xbf, 0,
        0,    0,    0,
        0,    0,    0,
        0x80,                                               /* movabs rdi, INTPTR_MIN */
        0xff, 0x53, (uint8_t)offsetof(struct uk_abi, sbrk), /* call [rbx + sbrk] */
        0x49, 0x89, 0xc4,                                   /* mov r12, rax */
        0xbf, 0,    0,
        0,    0x02,                                         /* mov edi, 32 MiB */
        0xff, 0x53, (uint8_t)offsetof(struct uk_abi, sbrk), /* call [rbx + sbrk] */
        0x31, 0xff,                                         /* xor edi, edi */
        0x48, 0x83, 0xf8,
        0xff, /* cmp rax, -1 */
        0x40, 0x0f, 0x94,
        0xc7, /* sete dil */
        0x49, 0x83, 0xfc,
        0xff,                                               /* cmp r12, -1 */
        0x0f, 0x95, 0xc0,                                   /* setne al */
        0x00, 0xc0,                                         /* add al, al */
        0x40, 0x08, 0xc7,                                   /* or dil, al */
        0xff, 0x53, (uint8_t)offsetof(struct uk_abi, exit), /* call [rbx + exit] */
        0x0f, 0x0b,                                         /* ud2 */
    };
    memcpy(img + CODE_VA, code, sizeof code); /* room up to SYMTAB_OFF */
}

/* Truncated inside the program headers. */
static void elf_truncated(void)
{
    len = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
}

static const struct variant {
    const char *name;
    void (*make)(void);
} variants[] = {
#define V(n)                                                                                       \
    {                                                                                              \
#n, n                                                                                      \
    }
    V(elf_ok),
    V(elf_fault_symbols),
    V(elf_rela_below_base),
    V(elf_rela_table_wraps),
    V(elf_dyn_misaligned),
    V(elf_rela_size_ragged),
    V(elf_rela_in_text),
    V(elf_rela_past_end),
    V(elf_rela_type),
    V(elf_entry_in_data),
    V(elf_entry_past_end),
    V(elf_phdr_wraps),
    V(elf_segment_wraps),
    V(elf_segment_past_file),
    V(elf_dyn_past_file),
    V(elf_shdr_wraps),
    V(elf_symtab_wraps),
    V(elf_strtab_unterminated),
    V(elf_sym_size_wraps),
    V(elf_symtab_misaligned),
    V(elf_truncated),
    V(elf_sbrk_wraps),
#undef V
};

/* main thread: writes p[0..n) to dir/name. */
static void put(const char *dir, const char *name, const void *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* cpio newc archives. */
static char ar[FILE_MAX * 2];
static size_t arlen;

/* main thread: appends a member (header fields as given: the broken archives lie in
 * them) and its 4-byte padding. */
static void member(const char *name, uint32_t namesize, const void *data, size_t n,
                   uint32_t filesize, uint32_t mode)
{
    arlen +=
        (size_t)sprintf(ar + arlen, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x", 0,
                        mode, 0, 0, 1, 0, filesize, 0, 0, 0, 0, namesize, 0);
    memcpy(ar + arlen, name, strlen(name) + 1);
    arlen = (arlen + strlen(name) + 1 + 3) & ~(size_t)3;
    memcpy(ar + arlen, data, n);
    arlen = (arlen + n + 3) & ~(size_t)3;
}

#define REG           0100644
#define CPIO_NAMESIZE 94 /* offset of the first header's namesize field */

/* main thread: the initrd qemu/ukrun packs for elf_ok, with `how` breaking it. */
static void archive(const char *dir, const char *name, int how)
{
    static const char conf[] = "image=elf_ok\nsize=1\nnodes=1\n";
    memset(ar, 0, sizeof ar);
    arlen = 0;
    base();
    member("job.conf", sizeof "job.conf", conf, sizeof conf - 1,
           how == 1 ? 0xffffffffu : sizeof conf - 1, REG);
    member("elf_ok", how == 2 ? 0xfffffff0u : sizeof "elf_ok", img, len, (uint32_t)len, REG);
    if (how != 3)
        member("TRAILER!!!", sizeof "TRAILER!!!", "", 0, 0, 0);
    if (how == 4)
        ar[CPIO_NAMESIZE] = 'g'; /* job.conf's namesize: not a hex digit */
    if (how == 5)
        arlen = 200; /* cut inside elf_ok */
    put(dir, name, ar, arlen);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--cpio")) {
        archive(argv[2], "cpio_ok", 0);
        archive(argv[2], "cpio_filesize_wraps", 1);
        archive(argv[2], "cpio_namesize_wraps", 2);
        archive(argv[2], "cpio_no_trailer", 3);
        archive(argv[2], "cpio_bad_hex", 4);
        archive(argv[2], "cpio_truncated", 5);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: pvas-images DIR | pvas-images --cpio DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        base();
        variants[i].make();
        put(argv[1], variants[i].name, img, len);
    }
    return 0;
}
