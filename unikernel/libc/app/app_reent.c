/* app_reent.c: newlib's per-thread state of a task is newlib's global one: the global
 * lives in the task's private data pages, so every task has its own. */
#include <sys/reent.h>

struct _reent *__getreent(void);

/* Any context in the task. */
struct _reent *__getreent(void)
{
    return _impure_ptr;
}
