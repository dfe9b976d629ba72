/*
 * files_app: a job's files as an MPI program written for Linux uses them (tests/files/
 * run.sh). Every rank reads the input tree; with "write", every rank writes its own files;
 * "noout" checks that a job without --output cannot create any. Rank r prints
 * "files: rank r: ..." lines that run.sh compares with what it computed on the host, and
 * "FAIL ..." for a check that did not hold.
 *
 * Input tree (run.sh): deck.txt (--file), data/ (--dir) with data/sub/nums.bin.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIG_BYTES 300000 /* several 4 KiB records of the kernel's stream */
#define HOLE_AT   10000
#define CHUNK     777 /* odd-sized reads cross stdio's buffer boundaries */

static int rank, fails;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL rank %d: %s (errno %d: %s)\n", rank, what, errno, strerror(errno));
        fails++;
    }
}

/* FNV-1a of a whole file read through stdio in odd chunks; its size in *n. */
static uint32_t digest(const char *path, long *n)
{
    unsigned char buf[CHUNK];
    uint32_t h = 2166136261u;
    size_t got;
    FILE *f = fopen(path, "r");
    *n = -1;
    if (!f)
        return 0;
    *n = 0;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 16777619u;
        *n += (long)got;
    }
    fclose(f);
    return h;
}

static void read_tree(void)
{
    long n;
    uint32_t h = digest("deck.txt", &n);
    printf("files: rank %d: deck.txt %ld bytes fnv %08x\n", rank, n, h);
    h = digest("/data/sub/nums.bin", &n);
    printf("files: rank %d: data/sub/nums.bin %ld bytes fnv %08x\n", rank, n, h);

    struct stat st;
    check(stat("data", &st) == 0 && S_ISDIR(st.st_mode), "stat(data) is a directory");
    check(stat("deck.txt", &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0, "stat(deck)");
    errno = 0;
    check(fopen("missing.txt", "r") == NULL && errno == ENOENT, "missing file is ENOENT");
    errno = 0;
    check(open("data", O_RDONLY) < 0 && errno == EISDIR, "open(dir) is EISDIR");
    errno = 0;
    check(access("deck.txt", R_OK) == 0, "access(deck, R_OK)");
    check(access("deck.txt", W_OK) < 0 && errno == EROFS, "access(deck, W_OK) is EROFS");
    errno = 0;
    check(fopen("deck.txt", "w") == NULL && errno == EROFS, "writing an input is EROFS");

    /* lseek and read on a raw fd: the last 4 bytes of nums.bin. */
    int fd = open("data/sub/nums.bin", O_RDONLY);
    unsigned char tail[4];
    check(fd >= 0, "open(nums.bin)");
    off_t end = lseek(fd, 0, SEEK_END);
    check(end >= 4 && lseek(fd, end - 4, SEEK_SET) == end - 4, "lseek");
    check(read(fd, tail, 4) == 4 && read(fd, tail, 4) == 0, "read at the end");
    check(fstat(fd, &st) == 0 && st.st_size == end, "fstat size");
    check(close(fd) == 0, "close");
    printf("files: rank %d: nums.bin ends %02x%02x%02x%02x\n", rank, tail[0], tail[1], tail[2],
           tail[3]);

    char cwd[64];
    check(chdir("data") == 0 && getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/data"), "chdir");
    check(digest("sub/nums.bin", &n) != 0 && n == end, "relative path after chdir");
    check(chdir("..") == 0 && getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/"), "chdir ..");
}

static void write_files(void)
{
    char path[64];
    snprintf(path, sizeof path, "out/rank%d.txt", rank);
    FILE *f = fopen(path, "w");
    check(f != NULL, "fopen(out/rankN.txt, w)");
    if (!f)
        return;
    for (int i = 0; i < 3; i++)
        fprintf(f, "rank %d line %d\n", rank, i);
    check(fclose(f) == 0, "fclose");
    errno = 0;
    check(fopen(path, "r") == NULL, "an output file is write-only");

    if (rank == 0) { /* a big file through stdio */
        f = fopen("big.bin", "wb");
        check(f != NULL, "fopen(big.bin)");
        for (int i = 0; f && i < BIG_BYTES; i++)
            fputc((i * 7 + 3) & 0xff, f);
        check(f && fclose(f) == 0, "fclose(big.bin)");
    }
    if (rank == 1) { /* a hole */
        int fd = open("sparse.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        check(fd >= 0 && write(fd, "A", 1) == 1, "write A");
        check(lseek(fd, HOLE_AT, SEEK_SET) == HOLE_AT && write(fd, "B", 1) == 1, "write B");
        check(close(fd) == 0, "close sparse");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    read_tree();
    if (!strcmp(mode, "write")) {
        write_files();
        errno = 0;
        check(mkdir("out", 0755) == 0, "mkdir where files can be created");
    }
    if (!strcmp(mode, "noout")) {
        errno = 0;
        check(fopen("result.txt", "w") == NULL && errno == EROFS, "no --output: EROFS");
        errno = 0;
        check(mkdir("newdir", 0755) < 0 && errno == EROFS, "no --output: mkdir is EROFS");
    }
    if (!strcmp(mode, "fail") && rank == 0) { /* written, then the job fails */
        FILE *f = fopen("partial.txt", "w");
        check(f && fputs("written before the failure\n", f) >= 0 && fflush(f) == 0, "partial");
        printf("files: rank 0: exits 3 with partial.txt open\n");
        fflush(stdout);
        exit(3);
    }
    printf("files: rank %d: %s\n", rank, fails ? "FAIL" : "ok");
    MPI_Finalize();
    return fails != 0;
}
