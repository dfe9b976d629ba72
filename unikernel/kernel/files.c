/* files.c: see files.h. The input tree is a table of the initrd's "fs/" entries, searched
 * linearly: a job packs a handful of input decks, and each is looked up once per open. */
#include "kernel/files.h"
#include "kernel/cpio.h"
#include "kernel/fmt.h"
#include "drivers/uart.h"
#include "uk/console.h"
#include "uk/fspath.h"
#include "uk/spinlock.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FILES_REC_HDR   64   /* room for the longest record header line */
#define FILES_REC_CHUNK 4096 /* bytes per W record: interrupts stay masked that long */

struct input {
    const char *path; /* canonical, inside the initrd */
    const char *data;
    uint64_t size;
};

static struct input *inputs;
static int ninputs, bad_names;

static int out_on;
static spinlock_t out_lock;
static void *out_owner[FILES_OUT_MAX]; /* the task that opened each id, or NULL */

/* Task context (cpio_each's callback): count the tree's files, or with `inputs` set,
 * record them. A name that is not canonical would let a lookup miss it: refused. */
static void collect(const struct cpio_file *f, void *ctx)
{
    (void)ctx;
    size_t pre = sizeof FILES_INITRD_DIR - 1;
    if (strncmp(f->name, FILES_INITRD_DIR, pre))
        return;
    const char *p = f->name + pre;
    if (!*p || !fs_path_canonical(p, FS_PATH_MAX)) {
        kprintf("files: initrd entry '%s' is not a canonical path\n", f->name);
        bad_names++;
        return;
    }
    if (inputs)
        inputs[ninputs] = (struct input){p, f->data, f->size};
    ninputs++;
}

/* Task context, once; see files.h. */
int files_init(const void *archive, size_t len, int output)
{
    if (archive && cpio_each(archive, len, collect, 0) > 0 && ninputs > 0) {
        inputs = calloc((size_t)ninputs, sizeof *inputs);
        if (!inputs) {
            kprintf("files: no memory for %d input files\n", ninputs);
            return -1;
        }
        ninputs = 0;
        cpio_each(archive, len, collect, 0);
    }
    if (bad_names)
        return -1;
    if (output) {
        if (uart_port_init(UART_COM2) != 0) {
            kprintf("files: the job has output files but the machine no second serial "
                    "port\n");
            return -1;
        }
        static const char hello[] = "ukfiles 1\n";
        uart_port_write(UART_COM2, hello, sizeof hello - 1);
        out_on = 1;
    }
    return 0;
}

/* Any context; see files.h. */
enum files_kind files_lookup(const char *path, int *index, uint64_t *size)
{
    size_t n = strlen(path);
    if (n == 0)
        return FILES_DIR;
    enum files_kind k = FILES_NONE;
    for (int i = 0; i < ninputs; i++) {
        if (!strcmp(inputs[i].path, path)) {
            *index = i;
            *size = inputs[i].size;
            return FILES_FILE;
        }
        if (!strncmp(inputs[i].path, path, n) && inputs[i].path[n] == '/')
            k = FILES_DIR;
    }
    return k;
}

/* Task context; see files.h. */
long files_pread(int index, uint64_t off, void *buf, size_t len)
{
    if (index < 0 || index >= ninputs)
        return -1;
    const struct input *f = &inputs[index];
    if (off >= f->size)
        return 0;
    if (len > f->size - off)
        len = (size_t)(f->size - off);
    memcpy(buf, f->data + off, len);
    return (long)len;
}

/* Any context; see files.h. */
int files_writable(void)
{
    return out_on;
}

/* Under out_lock: one record header line. */
static void out_line(const char *fmt, unsigned long long a, unsigned long long b,
                     unsigned long long c)
{
    char line[FILES_REC_HDR];
    size_t n = kformat(line, sizeof line, fmt, a, b, c);
    uart_port_write(UART_COM2, line, n);
}

/* Task context; see files.h. */
int files_out_open(const char *path, int trunc, void *owner)
{
    int index;
    uint64_t size;
    enum files_kind k = files_lookup(path, &index, &size);
    if (!out_on || k == FILES_FILE)
        return -EROFS;
    if (k == FILES_DIR)
        return -EISDIR;
    uint64_t fl = spin_lock_irqsave(&out_lock);
    int id = 0;
    while (id < FILES_OUT_MAX && out_owner[id])
        id++;
    if (id == FILES_OUT_MAX) {
        spin_unlock_irqrestore(&out_lock, fl);
        return -EMFILE;
    }
    out_owner[id] = owner;
    size_t n = strlen(path);
    out_line("O %llu %llu %llu\n", (unsigned long long)id, !!trunc, n);
    uart_port_write(UART_COM2, path, n);
    spin_unlock_irqrestore(&out_lock, fl);
    return id;
}

/* Any context: is output file `id` open, and `owner`'s? */
static int owns(int id, const void *owner)
{
    return id >= 0 && id < FILES_OUT_MAX && owner && out_owner[id] == owner;
}

/* Task context; see files.h. A long write goes out as several records, so that
 * interrupts are never masked for more than one chunk. */
int files_out_write(int id, void *owner, uint64_t off, const void *buf, size_t len)
{
    if (!owns(id, owner))
        return -EBADF;
    const char *p = buf;
    while (len > 0) {
        size_t n = len < FILES_REC_CHUNK ? len : FILES_REC_CHUNK;
        uint64_t fl = spin_lock_irqsave(&out_lock);
        out_line("W %llu %llu %llu\n", (unsigned long long)id, off, n);
        uart_port_write(UART_COM2, p, n);
        spin_unlock_irqrestore(&out_lock, fl);
        p += n;
        off += n;
        len -= n;
    }
    return 0;
}

/* Task context; see files.h. */
void files_out_close(int id, void *owner)
{
    if (!owns(id, owner))
        return;
    uint64_t fl = spin_lock_irqsave(&out_lock);
    out_line("C %llu\n", (unsigned long long)id, 0, 0);
    out_owner[id] = 0;
    spin_unlock_irqrestore(&out_lock, fl);
}

/* Scheduler context: task `owner` ended; close what it left open (its fds die with it). */
void files_out_task_exited(void *owner)
{
    for (int id = 0; id < FILES_OUT_MAX; id++)
        if (owner && out_owner[id] == owner)
            files_out_close(id, owner);
}
