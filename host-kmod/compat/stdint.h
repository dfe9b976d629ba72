/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The modules are built with -nostdinc: the <stdint.h> of the shared sources (mpi/core,
 * mpi/cad) comes from here. Hazard: <linux/types.h>'s uint64_t is unsigned long long, not
 * user space's unsigned long (only format strings care; the shared sources print none).
 * UINT64_MAX is U64_MAX.
 */
#ifndef KMOD_COMPAT_STDINT_H
#define KMOD_COMPAT_STDINT_H
#include <linux/types.h>
#include <linux/limits.h>
#ifndef UINT64_MAX
#define UINT64_MAX U64_MAX
#endif
#ifndef UINT32_MAX
#define UINT32_MAX U32_MAX
#endif
#endif
