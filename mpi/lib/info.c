/*
 * info.c: MPI_Info objects: (key, value) string pairs in the order their keys were first
 * set (MPI_Info_get_nthkey's order; setting a key again replaces its value in place).
 *
 * Limits: a key is 1 .. MPI_MAX_INFO_KEY characters (MPI_ERR_INFO_KEY otherwise), a value
 * 1 .. MPI_MAX_INFO_VAL (MPI_ERR_INFO_VALUE); MPI_INFO_NULL is MPI_ERR_INFO.
 * Errors go to MPI_COMM_WORLD's handler (no communicator is involved). MPI_INFO_ENV is a
 * predefined object without keys that MPI_Info_free refuses.
 */
#include "mpi_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ukapp.h>

struct info_ent {
    char *key, *val; /* malloc'd copies */
};

struct mpi_info_s {
    int n, cap;
    struct info_ent *ents;
    int predefined;
};

struct mpi_info_s mpi_info_env_ = {.predefined = 1};

/* Task context: MPI_SUCCESS if info is an object (not MPI_INFO_NULL). */
static int check(MPI_Info info)
{
    return info ? MPI_SUCCESS : MPI_ERR_INFO;
}

/* Task context: MPI_SUCCESS if key is a valid key (length 1 .. MPI_MAX_INFO_KEY). */
static int check_key(const char *key)
{
    if (!key)
        return MPI_ERR_INFO_KEY;
    size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    return n >= 1 && n <= MPI_MAX_INFO_KEY ? MPI_SUCCESS : MPI_ERR_INFO_KEY;
}

/* Task context: the index of key in info, or -1. */
static int find(MPI_Info info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (!strcmp(info->ents[i].key, key))
            return i;
    return -1;
}

/* Task context. */
int MPI_Info_create(MPI_Info *info)
{
    if (!info)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Info_create");
    MPI_Info i = calloc(1, sizeof *i);
    if (!i)
        return err_raise(NULL, MPI_ERR_NO_MEM, "MPI_Info_create");
    *info = i;
    return MPI_SUCCESS;
}

/* Task context. Copies key and value (the caller keeps its strings). */
int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fn[] = "MPI_Info_set";
    int rc = check(info);
    if (rc == MPI_SUCCESS)
        rc = check_key(key);
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    size_t vlen = value ? strnlen(value, MPI_MAX_INFO_VAL + 1) : 0;
    if (vlen < 1 || vlen > MPI_MAX_INFO_VAL)
        return err_raise(NULL, MPI_ERR_INFO_VALUE, fn);
    if (info->predefined)
        return err_raise(NULL, MPI_ERR_INFO, fn);
    char *v = strdup(value);
    if (!v)
        return err_raise(NULL, MPI_ERR_NO_MEM, fn);
    int i = find(info, key);
    if (i >= 0) {
        free(info->ents[i].val);
        info->ents[i].val = v;
        return MPI_SUCCESS;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        struct info_ent *e = realloc(info->ents, sizeof *e * (size_t)cap);
        if (!e) {
            free(v);
            return err_raise(NULL, MPI_ERR_NO_MEM, fn);
        }
        info->ents = e;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return err_raise(NULL, MPI_ERR_NO_MEM, fn);
    }
    info->ents[info->n++] = (struct info_ent){k, v};
    return MPI_SUCCESS;
}

/* Task context. value has room for valuelen characters and a NUL; a longer value is cut
 * to valuelen characters (MPI's rule). */
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get";
    int rc = check(info);
    if (rc == MPI_SUCCESS)
        rc = check_key(key);
    if (rc == MPI_SUCCESS && (valuelen < 0 || !flag || (!value && valuelen > 0)))
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    int i = find(info, key);
    *flag = i >= 0;
    if (i >= 0 && value) {
        size_t n = strlen(info->ents[i].val);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, info->ents[i].val, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

/* Task context (MPI-4.0): *buflen is the size of value on entry (0: only ask the length),
 * the value's length + 1 on return; a value that does not fit is cut, NUL-terminated. */
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get_string";
    int rc = check(info);
    if (rc == MPI_SUCCESS)
        rc = check_key(key);
    if (rc == MPI_SUCCESS && (!buflen || *buflen < 0 || !flag || (!value && *buflen > 0)))
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    int i = find(info, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t n = strlen(info->ents[i].val);
    if (*buflen > 0) {
        size_t c = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, info->ents[i].val, c);
        value[c] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

/* Task context, also before MPI_Init and after MPI_Finalize (MPI-4.0 11.2.1): a new info
 * with what started this process, under the keys mpiexec takes: command, argv (the
 * arguments after the command, joined by spaces), maxprocs (the job's size), wdir and
 * thread_level. Keys without a meaning here (soft, host, arch, file) are absent. */
int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create_env";
    char args[MPI_MAX_INFO_VAL + 1], num[16];
    size_t n = 0;
    if (!info || argc < 0 || (argc > 0 && !argv))
        return err_raise(NULL, MPI_ERR_ARG, fn);
    int rc = MPI_Info_create(info);
    if (rc != MPI_SUCCESS)
        return rc;
    args[0] = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        size_t len = strlen(argv[i]);
        if (n + (n > 0) + len > MPI_MAX_INFO_VAL)
            break; /* an info value has a limit; a longer command line is cut at a word */
        if (n > 0)
            args[n++] = ' ';
        memcpy(args + n, argv[i], len + 1);
        n += len;
    }
    snprintf(num, sizeof num, "%d", uk_size());
    if (argc > 0 && argv[0] && *argv[0])
        rc = MPI_Info_set(*info, "command", argv[0]);
    if (rc == MPI_SUCCESS && n > 0)
        rc = MPI_Info_set(*info, "argv", args);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(*info, "maxprocs", num);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(*info, "wdir", "/");
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(*info, "thread_level", "MPI_THREAD_SERIALIZED");
    return rc;
}

/* Task context. */
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fn[] = "MPI_Info_get_valuelen";
    int rc = check(info);
    if (rc == MPI_SUCCESS)
        rc = check_key(key);
    if (rc == MPI_SUCCESS && (!valuelen || !flag))
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    int i = find(info, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(info->ents[i].val);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Info_delete(MPI_Info info, const char *key)
{
    static const char fn[] = "MPI_Info_delete";
    int rc = check(info);
    if (rc == MPI_SUCCESS)
        rc = check_key(key);
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    int i = find(info, key);
    if (i < 0)
        return err_raise(NULL, MPI_ERR_INFO_NOKEY, fn);
    free(info->ents[i].key);
    free(info->ents[i].val);
    memmove(&info->ents[i], &info->ents[i + 1], sizeof *info->ents * (size_t)(info->n - i - 1));
    info->n--;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    int rc = check(info);
    if (rc == MPI_SUCCESS && !nkeys)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, "MPI_Info_get_nkeys");
    *nkeys = info->n;
    return MPI_SUCCESS;
}

/* Task context. key has room for MPI_MAX_INFO_KEY characters and a NUL. */
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    int rc = check(info);
    if (rc == MPI_SUCCESS && (!key || n < 0 || n >= info->n))
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, "MPI_Info_get_nthkey");
    strcpy(key, info->ents[n].key); /* at most MPI_MAX_INFO_KEY characters: check_key */
    return MPI_SUCCESS;
}

/* Task context. The copy has the same keys in the same order. */
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    int rc = check(info);
    if (rc == MPI_SUCCESS && !newinfo)
        rc = MPI_ERR_ARG;
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_create(newinfo);
    for (int i = 0; rc == MPI_SUCCESS && i < info->n; i++)
        rc = MPI_Info_set(*newinfo, info->ents[i].key, info->ents[i].val);
    return err_raise(NULL, rc, "MPI_Info_dup");
}

/* Task context. */
int MPI_Info_free(MPI_Info *info)
{
    if (!info || check(*info) != MPI_SUCCESS || (*info)->predefined)
        return err_raise(NULL, MPI_ERR_INFO, "MPI_Info_free");
    MPI_Info i = *info;
    for (int k = 0; k < i->n; k++) {
        free(i->ents[k].key);
        free(i->ents[k].val);
    }
    free(i->ents);
    free(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
