/* pvas_elf.h: the ELF64 structures the loader reads (our own definitions: newlib has no
 * <elf.h>, and the kernel must not depend on the host's). Values from the System V ABI. */
#ifndef UK_PVAS_ELF_H
#define UK_PVAS_ELF_H
#include <stdint.h>

typedef struct {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} elf64_ehdr;

typedef struct {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
} elf64_phdr;

typedef struct {
    uint32_t name, type;
    uint64_t flags, addr, offset, size;
    uint32_t link, info;
    uint64_t addralign, entsize;
} elf64_shdr;

typedef struct {
    int64_t tag;
    uint64_t val;
} elf64_dyn;

typedef struct {
    uint64_t offset, info;
    int64_t addend;
} elf64_rela;

typedef struct {
    uint32_t name;
    unsigned char info, other;
    uint16_t shndx;
    uint64_t value, size;
} elf64_sym;

#define EI_CLASS          4 /* ident[] index */
#define EI_DATA           5 /* ident[] index */
#define ELFCLASS64        2
#define ELFDATA2LSB       1
#define ET_DYN            3
#define EM_X86_64         62
#define PT_NULL           0
#define PT_LOAD           1
#define PT_DYNAMIC        2
#define PT_INTERP         3
#define PT_TLS            7
#define PF_X              1
#define PF_W              2
#define SHT_SYMTAB        2
#define DT_NULL           0
#define DT_RELA           7
#define DT_RELASZ         8
#define DT_RELAENT        9
#define DT_TEXTREL        22
#define DT_FLAGS          30
#define DF_TEXTREL        0x4
#define R_X86_64_NONE     0
#define R_X86_64_RELATIVE 8
#define STT_FUNC          2
#define ELF64_ST_TYPE(i)  ((i)&0xf) /* elf64_sym.info: type in the low 4 bits */

#endif
