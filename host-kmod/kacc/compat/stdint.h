/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel is built with -nostdinc: mpi/cad's <stdint.h> comes from here. Hazard:
 * <linux/types.h>'s uint64_t is unsigned long long, not user space's unsigned long (only
 * format strings care; mpi/cad prints none). UINT64_MAX is U64_MAX.
 */
#ifndef KACC_COMPAT_STDINT_H
#define KACC_COMPAT_STDINT_H
#include <linux/types.h>
#include <linux/limits.h>
#ifndef UINT64_MAX
#define UINT64_MAX U64_MAX
#endif
#ifndef UINT32_MAX
#define UINT32_MAX U32_MAX
#endif
#endif
