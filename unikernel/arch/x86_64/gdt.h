#ifndef UK_GDT_H
#define UK_GDT_H
#include <stdint.h>
void gdt_init_this(const uint64_t ist[4]);
#endif
