/*
 * files.h: a job's files (qemu/ukrun --file, --dir, --output).
 *
 * Input: a read-only tree, packed by ukrun into the initrd under FILES_INITRD_DIR ("fs/"
 * + the path in the tree). Every rank of every node sees the same tree at the same paths;
 * the root of the tree is also every rank's working directory. The data stay in the
 * initrd: reads copy from there.
 *
 * Output: with ukrun --output DIR, a rank may create files anywhere in the tree except on
 * an input file or directory; what it writes is streamed at once, record by record, out
 * of the second serial port (COM2) to a host file, and ukrun rebuilds the files under DIR
 * after the job (qemu/ukfiles). Nothing is kept in the guest, so what was written
 * survives a job that fails later. Output files are write-only. The stream:
 *
 *   "ukfiles 1\n"                         once, first
 *   "O <id> <trunc> <pathlen>\n" <path>   file <id> opened (trunc: 1 = truncate it)
 *   "W <id> <off> <len>\n" <len bytes>    bytes written at offset <off>
 *   "C <id>\n"                            closed: <id> may name another file next
 *
 * numbers in decimal, paths canonical (uk/fspath.h). Records of different tasks never
 * interleave (one lock around each).
 */
#ifndef UK_KERNEL_FILES_H
#define UK_KERNEL_FILES_H
#include <stddef.h>
#include <stdint.h>

#define FILES_INITRD_DIR "fs/"
#define FILES_OUT_MAX    256 /* output files open at once on a node */

enum files_kind { FILES_NONE, FILES_FILE, FILES_DIR };

/* Task context, once at job start: index the input tree of the initrd (`archive`, `len`),
 * and with `output` set, open the output stream on COM2. 0, or -1 after saying why (a
 * name that is not canonical, no second serial port). */
int files_init(const void *archive, size_t len, int output);

/* Any context. What the canonical `path` names in the input tree; for a file, its index
 * and size. */
enum files_kind files_lookup(const char *path, int *index, uint64_t *size);

/* Task context: up to `len` bytes of input file `index` from offset `off` into buf (the
 * caller checked buf). The bytes copied (0 at or past the end), or -1 for a bad index. */
long files_pread(int index, uint64_t off, void *buf, size_t len);

/* Any context: may the ranks create output files? */
int files_writable(void);
/* Task context: create or open the output file at canonical `path` for task `owner` (a
 * token; only the owner may write or close the id). Its id, or a negative errno: EROFS
 * (no --output, or an input file), EISDIR, EMFILE. */
int files_out_open(const char *path, int trunc, void *owner);
/* Task context: len bytes of buf (checked by the caller) at offset off of output file id.
 * 0, or -EBADF (not open, or not the owner's). */
int files_out_write(int id, void *owner, uint64_t off, const void *buf, size_t len);
/* Task context: close output file id (an id that is not the owner's is ignored). */
void files_out_close(int id, void *owner);
/* Scheduler context: task `owner` ended: close its output files. */
void files_out_task_exited(void *owner);

#endif
