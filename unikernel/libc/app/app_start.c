/* app_start.c: from _start to main(), and out through exit(). */
#include <stdlib.h>
#include <uk/abi.h>

extern char **environ;
extern int main(int argc, char **argv, char **envp);
void __libc_init_array(void);
void uk_app_start(const struct uk_abi *abi, int argc, char **argv, char **envp);

/* The kernel's table, for the runtime's system calls (app_kapi.c). */
const struct uk_abi *uk_abi;

/* Task context, once, from crt0.S. */
void uk_app_start(const struct uk_abi *abi, int argc, char **argv, char **envp)
{
    uk_abi = abi;
    environ = envp;
    __libc_init_array(); /* constructors */
    exit(main(argc, argv, envp));
}
