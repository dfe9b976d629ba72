/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ukload_uapi.h: the ioctls of /dev/ukload (ukload.ko), shared with the ukload tool.
 *
 * LOAD copies an ELF image into the reserved range and prepares its boot (the image and
 * command line are read once into the module's own copy, then checked); BOOT starts it on
 * the CPU given to LOAD; STOP sends that CPU INIT; STATUS reports. read() streams the
 * unikernel's console from the file position (bytes since the image was loaded).
 */
#ifndef UKLOAD_UAPI_H
#define UKLOAD_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define UKLOAD_CMDLINE_MAX 3072 /* the caller's part; the module appends its own */

#define UKLOAD_MAX_CPU 64 /* CPUs are named by a bit mask of Linux's CPU numbers */

struct ukload_load {
	__u64 elf; /* user address of the ELF image */
	__u64 elf_len;
	__u64 cmdline; /* user address of the command line (no NUL needed) */
	__u64 cpus;    /* Linux's numbers of present CPUs that Linux has not onlined */
	__u64 initrd;  /* user address of the initrd (the job), or 0 */
	__u64 initrd_len;
	__u32 cmdline_len;
	__u32 cpu; /* the one of cpus that boots first (it starts the others) */
};

/* ukload_status.state: the module's view. */
#define UKLOAD_IDLE 0	 /* nothing loaded */
#define UKLOAD_LOADED 1	 /* an image is in place, not started */
#define UKLOAD_RUNNING 2 /* started: the CPU is the unikernel's until STOP */

struct ukload_status {
	__u32 state;	 /* UKLOAD_IDLE .. UKLOAD_RUNNING */
	__u32 cpu;	 /* the first CPU */
	__u32 shm_state; /* the unikernel's UKL_STATE_* (ukload_shm.h), 0 before BOOT */
	__u32 exit_code; /* valid once shm_state is UKL_STATE_EXITED */
	__u64 cons_head; /* console bytes written since LOAD */
	__u64 phys_base;
	__u64 phys_size;
	__u64 cpus; /* all its CPUs */
};

#define UKLOAD_IOC_MAGIC 'k'
#define UKLOAD_LOAD _IOW(UKLOAD_IOC_MAGIC, 0x40, struct ukload_load)
#define UKLOAD_BOOT _IO(UKLOAD_IOC_MAGIC, 0x41)
#define UKLOAD_STOP _IO(UKLOAD_IOC_MAGIC, 0x42)
#define UKLOAD_STATUS _IOR(UKLOAD_IOC_MAGIC, 0x43, struct ukload_status)

#endif
