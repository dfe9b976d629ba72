/*
 * info.c: MPI conformance of MPI_Info objects: create, set (new key, replaced value), get
 * (whole and cut to valuelen), get_valuelen, get_nkeys, get_nthkey (order of first set),
 * delete, dup (independent copy), free (handle set to MPI_INFO_NULL), and the errors:
 * keys and values over MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL, empty keys, deleting a missing
 * key, a key index out of range. Every rank runs the same checks on its own objects;
 * only rank 0 prints. Runs on any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int cls(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void check_basic(void)
{
    MPI_Info info;
    char val[64], key[MPI_MAX_INFO_KEY + 1];
    int flag = -1, n = -1, len = -1;
    MPI_Info_create(&info);
    EXPECT(info != MPI_INFO_NULL, "Info_create gave MPI_INFO_NULL");
    MPI_Info_get_nkeys(info, &n);
    EXPECT(n == 0, "new info has %d keys", n);
    MPI_Info_set(info, "color", "red");
    MPI_Info_set(info, "shape", "square");
    MPI_Info_set(info, "size", "large");
    MPI_Info_set(info, "color", "blue"); /* replaces in place */
    MPI_Info_get_nkeys(info, &n);
    EXPECT(n == 3, "%d keys after 4 sets of 3 keys", n);
    const char *order[3] = {"color", "shape", "size"};
    for (int i = 0; i < 3 && i < n; i++) {
        key[0] = 0;
        MPI_Info_get_nthkey(info, i, key);
        EXPECT(!strcmp(key, order[i]), "nthkey %d is '%s', expected '%s'", i, key, order[i]);
    }
    MPI_Info_get(info, "color", sizeof val - 1, val, &flag);
    EXPECT(flag == 1 && !strcmp(val, "blue"), "get color: flag %d '%s'", flag, val);
    MPI_Info_get_valuelen(info, "shape", &len, &flag);
    EXPECT(flag == 1 && len == 6, "valuelen shape: flag %d len %d", flag, len);
    /* Cut to valuelen characters, NUL-terminated. */
    memset(val, 'x', sizeof val);
    MPI_Info_get(info, "shape", 3, val, &flag);
    EXPECT(flag == 1 && !strcmp(val, "squ"), "get shape cut to 3: flag %d '%s'", flag, val);
    MPI_Info_get(info, "missing", sizeof val - 1, val, &flag);
    EXPECT(flag == 0, "missing key has flag %d", flag);
    MPI_Info_get_valuelen(info, "missing", &len, &flag);
    EXPECT(flag == 0, "valuelen of missing key has flag %d", flag);
    MPI_Info_delete(info, "shape");
    MPI_Info_get_nkeys(info, &n);
    EXPECT(n == 2, "%d keys after delete", n);
    MPI_Info_get_nthkey(info, 1, key);
    EXPECT(!strcmp(key, "size"), "after delete nthkey 1 is '%s'", key);
    MPI_Info_get(info, "shape", sizeof val - 1, val, &flag);
    EXPECT(flag == 0, "deleted key still has flag %d", flag);
    MPI_Info_free(&info);
    EXPECT(info == MPI_INFO_NULL, "Info_free left the handle");
    report("Info_create, set, replace, get, get_valuelen, get_nkeys, get_nthkey, delete, free");
}

static void check_dup(void)
{
    MPI_Info a, b;
    char val[64];
    int flag, n = -1;
    MPI_Info_create(&a);
    MPI_Info_set(a, "k1", "v1");
    MPI_Info_set(a, "k2", "v2");
    MPI_Info_dup(a, &b);
    MPI_Info_set(a, "k1", "changed");
    MPI_Info_delete(a, "k2");
    MPI_Info_get_nkeys(b, &n);
    EXPECT(n == 2, "dup has %d keys", n);
    MPI_Info_get(b, "k1", sizeof val - 1, val, &flag);
    EXPECT(flag == 1 && !strcmp(val, "v1"), "dup's k1: flag %d '%s'", flag, val);
    MPI_Info_get(b, "k2", sizeof val - 1, val, &flag);
    EXPECT(flag == 1 && !strcmp(val, "v2"), "dup's k2: flag %d '%s'", flag, val);
    MPI_Info_free(&a);
    MPI_Info_get(b, "k1", sizeof val - 1, val, &flag);
    EXPECT(flag == 1 && !strcmp(val, "v1"), "dup after freeing the original: '%s'", val);
    MPI_Info_free(&b);
    report("Info_dup is an independent copy in the same order");
}

/* Long keys and values: MPI_MAX_INFO_KEY - 1 and MPI_MAX_INFO_VAL - 1 characters are
 * accepted (Open MPI counts the NUL in the limit, the standard does not: exactly the limit
 * is not tested), one more than the limit is an error of class MPI_ERR_INFO_KEY /
 * MPI_ERR_INFO_VALUE. */
static void check_limits(void)
{
    MPI_Info info;
    static char key[MPI_MAX_INFO_KEY + 2], val[MPI_MAX_INFO_VAL + 2], got[MPI_MAX_INFO_VAL + 1];
    int flag = 0, len = -1, rc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    key[MPI_MAX_INFO_KEY - 1] = 0;
    memset(val, 'v', MPI_MAX_INFO_VAL - 1);
    val[MPI_MAX_INFO_VAL - 1] = 0;
    rc = MPI_Info_set(info, key, val);
    EXPECT(rc == MPI_SUCCESS, "long key and value refused: %d", rc);
    MPI_Info_get_valuelen(info, key, &len, &flag);
    EXPECT(flag == 1 && len == MPI_MAX_INFO_VAL - 1, "long value: flag %d len %d", flag, len);
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
    EXPECT(flag == 1 && !strcmp(got, val), "long value read back wrong");
    memset(key, 'k', MPI_MAX_INFO_KEY + 1);
    key[MPI_MAX_INFO_KEY + 1] = 0;
    rc = MPI_Info_set(info, key, "x");
    EXPECT(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_INFO_KEY, "key too long: %d", rc);
    memset(val, 'v', MPI_MAX_INFO_VAL + 1);
    val[MPI_MAX_INFO_VAL + 1] = 0;
    rc = MPI_Info_set(info, "short", val);
    EXPECT(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_INFO_VALUE, "value too long: %d", rc);
    rc = MPI_Info_set(info, "", "x");
    EXPECT(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_INFO_KEY, "empty key: %d", rc);
    rc = MPI_Info_delete(info, "missing");
    EXPECT(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_INFO_NOKEY, "delete missing: %d", rc);
    rc = MPI_Info_get_nthkey(info, 1, got);
    /* No class is prescribed (Open MPI: MPI_ERR_INFO_KEY, MPICH: MPI_ERR_ARG). */
    EXPECT(rc != MPI_SUCCESS, "nthkey out of range succeeded");
    int n = -1;
    MPI_Info_get_nkeys(info, &n);
    EXPECT(n == 1, "%d keys after the refused sets", n);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    report("MPI_MAX_INFO_KEY/VAL limits and the error classes of bad keys and values");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "info"))
        return 0;
    check_basic();
    check_dup();
    check_limits();
    return finish("info");
}
