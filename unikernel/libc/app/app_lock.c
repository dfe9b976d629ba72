/*
 * app_lock.c: newlib's locks in an application: none are needed. A task is one thread,
 * and its newlib state (stdio buffers, malloc arena, errno) is its own, in its partition's
 * private data: no other task ever touches it. The lock objects newlib names must exist.
 */
#include <sys/lock.h>

struct __lock {
    char unused;
};

struct __lock __lock___sinit_recursive_mutex, __lock___sfp_recursive_mutex,
    __lock___atexit_recursive_mutex, __lock___at_quick_exit_mutex, __lock___malloc_recursive_mutex,
    __lock___env_recursive_mutex, __lock___tz_mutex, __lock___dd_hash_mutex,
    __lock___arc4random_mutex;

/* Task context, all of them: nothing to do for a single-threaded task. */
void __retarget_lock_init(_LOCK_T *lock)
{
    *lock = &__lock___sinit_recursive_mutex;
}
void __retarget_lock_init_recursive(_LOCK_T *lock)
{
    *lock = &__lock___sinit_recursive_mutex;
}
void __retarget_lock_close(_LOCK_T lock) {}
void __retarget_lock_close_recursive(_LOCK_T lock) {}
void __retarget_lock_acquire(_LOCK_T lock) {}
void __retarget_lock_acquire_recursive(_LOCK_T lock) {}
int __retarget_lock_try_acquire(_LOCK_T lock)
{
    return 1;
}
int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
    return 1;
}
void __retarget_lock_release(_LOCK_T lock) {}
void __retarget_lock_release_recursive(_LOCK_T lock) {}
