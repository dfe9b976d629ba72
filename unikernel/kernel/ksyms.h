/* ksyms.h: function names for backtraces, from the table mk/gen-ksyms.sh builds after a
 * first link (the image is then linked a second time with the table in .ksyms). */
#ifndef UK_KSYMS_H
#define UK_KSYMS_H
#include <stdint.h>

/* Any context. The function containing `addr` and the offset into it, or NULL. */
const char *ksyms_lookup(uint64_t addr, uint64_t *off);

#endif
