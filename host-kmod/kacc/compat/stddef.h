/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel is built with -nostdinc: mpi/cad's <stddef.h> (size_t, offsetof) comes from
 * here.
 */
#ifndef KACC_COMPAT_STDDEF_H
#define KACC_COMPAT_STDDEF_H
#include <linux/types.h>
#include <linux/stddef.h>
#endif
