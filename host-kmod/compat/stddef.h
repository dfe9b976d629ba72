/* SPDX-License-Identifier: GPL-2.0 */
/* The modules are built with -nostdinc: the <stddef.h> of the shared sources (mpi/core,
 * mpi/cad: size_t, offsetof) comes from here.
 */
#ifndef KMOD_COMPAT_STDDEF_H
#define KMOD_COMPAT_STDDEF_H
#include <linux/types.h>
#include <linux/stddef.h>
#endif
