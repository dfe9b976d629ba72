/* SPDX-License-Identifier: GPL-2.0 */
/* The modules are built with -nostdinc: the <string.h> of the shared sources (mpi/core,
 * mpi/cad: memcpy, memset) comes from here.
 */
#ifndef KMOD_COMPAT_STRING_H
#define KMOD_COMPAT_STRING_H
#include <linux/string.h>
#endif
