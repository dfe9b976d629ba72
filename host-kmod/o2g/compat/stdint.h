/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel is built with -nostdinc: mpi/core's <stdint.h> comes from here. The
 * fixed-width names are <linux/types.h>'s; hazard: its u64/uint64_t is unsigned long long,
 * not the unsigned long of x86_64 user space (only format strings care; mpi/core prints
 * none).
 */
#ifndef O2G_COMPAT_STDINT_H
#define O2G_COMPAT_STDINT_H
#include <linux/types.h>
#endif
