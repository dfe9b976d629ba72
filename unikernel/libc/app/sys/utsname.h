/*
 * sys/utsname.h: uname() for applications (newlib has no such header for this target).
 * Found before newlib's headers through ukmpicc's include path; served by app_sys.c.
 */
#ifndef UKAPP_SYS_UTSNAME_H
#define UKAPP_SYS_UTSNAME_H

#define _UTSNAME_LENGTH 65 /* Linux's size, so fixed-size copies written for it fit */

struct utsname {
    char sysname[_UTSNAME_LENGTH];
    char nodename[_UTSNAME_LENGTH];
    char release[_UTSNAME_LENGTH];
    char version[_UTSNAME_LENGTH];
    char machine[_UTSNAME_LENGTH];
};

int uname(struct utsname *u);

#endif
