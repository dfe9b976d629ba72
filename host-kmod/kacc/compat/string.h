/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel is built with -nostdinc: mpi/cad's <string.h> (memcpy, memset) comes from
 * here.
 */
#ifndef KACC_COMPAT_STRING_H
#define KACC_COMPAT_STRING_H
#include <linux/string.h>
#endif
