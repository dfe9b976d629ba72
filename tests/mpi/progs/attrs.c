/*
 * attrs.c: MPI conformance of communicator attributes: the predefined attributes of
 * MPI_COMM_WORLD, keyvals with copy and delete callbacks (set, get, replace, delete,
 * MPI_Comm_dup with MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN and a user copy function,
 * MPI_Comm_free), a keyval freed while still in use, the MPI-1 names, and an attribute on
 * MPI_COMM_SELF whose delete callback MPI_Finalize must run (it prints the line after the
 * closing one); datatype attributes (MPI_Type_dup and MPI_Type_free run the callbacks). Only rank 0 prints. Runs on any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The MPI-1 names are deprecated in Open MPI's mpi.h; testing them is the point. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* What the callbacks saw: calls, and the last value and extra_state. */
static int ncopy, ndelete;
static void *last_deleted, *last_extra;

static int count_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c;
    (void)k;
    ndelete++;
    last_deleted = val;
    last_extra = extra;
    return MPI_SUCCESS;
}

/* Copies value + 1 (the values are small integers cast to pointers). */
static int plus_one_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)k;
    ncopy++;
    last_extra = extra;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static void *V(long x)
{
    return (void *)x;
}

static void check_predefined(void)
{
    int *v = 0, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    EXPECT(flag && v && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, v ? *v : -1);
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
    EXPECT(flag && v && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL: flag %d", flag);
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
    EXPECT(flag && v && (*v == MPI_PROC_NULL || (*v >= 0 && *v < np)), "MPI_HOST: flag %d", flag);
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag);
    EXPECT(flag && v && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < np)),
           "MPI_IO: flag %d", flag);
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
    EXPECT(flag && v && *v == 0, "MPI_APPNUM: flag %d value %d", flag, flag ? *v : -1);
    /* The MPI-1 name reads the same. */
    flag = 0;
    MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    EXPECT(flag && v && *v >= 32767, "MPI_Attr_get(MPI_TAG_UB): flag %d", flag);
    report("predefined attributes of MPI_COMM_WORLD (TAG_UB, WTIME_IS_GLOBAL, HOST, IO, APPNUM)");
}

static void check_set_get_delete(void)
{
    int k1 = MPI_KEYVAL_INVALID, k2 = MPI_KEYVAL_INVALID, flag = -1, extra = 7;
    void *v = 0;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k1, &extra);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    EXPECT(k1 != MPI_KEYVAL_INVALID && k2 != MPI_KEYVAL_INVALID && k1 != k2,
           "keyvals %d %d not distinct", k1, k2);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag);
    EXPECT(flag == 0, "unset attribute has flag %d", flag);
    ndelete = 0;
    MPI_Comm_set_attr(MPI_COMM_WORLD, k1, V(100 + me));
    MPI_Comm_set_attr(MPI_COMM_WORLD, k2, V(200 + me));
    MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag);
    EXPECT(flag == 1 && v == V(100 + me), "get k1: flag %d value %ld", flag, (long)v);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k2, &v, &flag);
    EXPECT(flag == 1 && v == V(200 + me), "get k2: flag %d value %ld", flag, (long)v);
    EXPECT(ndelete == 0, "delete callback ran %d times on set", ndelete);
    /* Replacing runs the delete callback on the old value. */
    MPI_Comm_set_attr(MPI_COMM_WORLD, k1, V(300 + me));
    EXPECT(ndelete == 1 && last_deleted == V(100 + me) && last_extra == &extra,
           "replace: %d deletes, last value %ld", ndelete, (long)last_deleted);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag);
    EXPECT(flag == 1 && v == V(300 + me), "after replace: value %ld", (long)v);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k1);
    EXPECT(ndelete == 2 && last_deleted == V(300 + me), "delete_attr: %d deletes, value %ld",
           ndelete, (long)last_deleted);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag);
    EXPECT(flag == 0, "deleted attribute still has flag %d", flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k2, &v, &flag);
    EXPECT(flag == 1 && v == V(200 + me), "k2 lost after deleting k1: flag %d", flag);
    /* Attributes belong to one communicator. */
    MPI_Comm d;
    MPI_Comm_split(MPI_COMM_WORLD, 0, me, &d);
    MPI_Comm_get_attr(d, k2, &v, &flag);
    EXPECT(flag == 0, "attribute of WORLD visible on a split communicator");
    MPI_Comm_free(&d);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k2);
    MPI_Comm_free_keyval(&k1);
    MPI_Comm_free_keyval(&k2);
    EXPECT(k1 == MPI_KEYVAL_INVALID && k2 == MPI_KEYVAL_INVALID, "free_keyval left %d %d", k1, k2);
    report("Comm_create_keyval, set_attr, get_attr, replace, delete_attr, free_keyval");
}

static void check_dup_free(void)
{
    int kdup, knull, kplus, flag, extra = 0;
    void *v;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &knull, NULL);
    MPI_Comm_create_keyval(plus_one_copy, count_delete, &kplus, &extra);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, kdup, V(10));
    MPI_Comm_set_attr(a, knull, V(20));
    MPI_Comm_set_attr(a, kplus, V(30 + me));
    ncopy = ndelete = 0;
    last_extra = 0;
    MPI_Comm_dup(a, &b);
    EXPECT(ncopy == 1 && last_extra == &extra, "dup: %d user copies", ncopy);
    MPI_Comm_get_attr(b, kdup, &v, &flag);
    EXPECT(flag == 1 && v == V(10), "MPI_COMM_DUP_FN: flag %d value %ld", flag, (long)v);
    MPI_Comm_get_attr(b, knull, &v, &flag);
    EXPECT(flag == 0, "MPI_COMM_NULL_COPY_FN copied the attribute");
    MPI_Comm_get_attr(b, kplus, &v, &flag);
    EXPECT(flag == 1 && v == V(31 + me), "user copy: flag %d value %ld", flag, (long)v);
    MPI_Comm_get_attr(a, kplus, &v, &flag);
    EXPECT(flag == 1 && v == V(30 + me), "parent's value changed to %ld", (long)v);
    /* A dup of a dup copies again. */
    MPI_Comm c;
    MPI_Comm_dup(b, &c);
    MPI_Comm_get_attr(c, kplus, &v, &flag);
    EXPECT(flag == 1 && v == V(32 + me), "second dup: value %ld", (long)v);
    EXPECT(ndelete == 0, "dup ran %d delete callbacks", ndelete);
    MPI_Comm_free(&c);
    EXPECT(ndelete == 2, "free of the second dup: %d deletes, expected 2", ndelete);
    /* Freeing the keyval while b still uses it: b's attribute stays readable and its
     * delete callback still runs when b is freed. */
    MPI_Comm_free_keyval(&kplus);
    ndelete = 0;
    MPI_Comm_free(&b);
    EXPECT(ndelete == 2, "free of the dup: %d deletes, expected 2", ndelete);
    MPI_Comm_free(&a);
    EXPECT(ndelete == 5, "free of the parent: %d deletes in all, expected 5", ndelete);
    MPI_Comm_free_keyval(&kdup);
    MPI_Comm_free_keyval(&knull);
    report("Comm_dup runs copy callbacks (DUP_FN, NULL_COPY_FN, user), Comm_free delete ones");
}

static void check_mpi1(void)
{
    int k = MPI_KEYVAL_INVALID, flag = 0;
    void *v = 0;
    MPI_Keyval_create(MPI_DUP_FN, count_delete, &k, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, k, V(42));
    MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag);
    EXPECT(flag == 1 && v == V(42), "Attr_get: flag %d value %ld", flag, (long)v);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Attr_get(d, k, &v, &flag);
    EXPECT(flag == 1 && v == V(42), "MPI_DUP_FN on dup: flag %d", flag);
    ndelete = 0;
    MPI_Attr_delete(d, k);
    MPI_Attr_get(d, k, &v, &flag);
    EXPECT(flag == 0 && ndelete == 1, "Attr_delete: flag %d, %d deletes", flag, ndelete);
    MPI_Comm_free(&d);
    MPI_Attr_delete(MPI_COMM_WORLD, k);
    MPI_Keyval_free(&k);
    EXPECT(k == MPI_KEYVAL_INVALID, "Keyval_free left %d", k);
    report("MPI-1 names: Keyval_create, Attr_put, Attr_get, Attr_delete, Keyval_free");
}

static int type_delete(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t;
    (void)k;
    (void)extra;
    ndelete++;
    last_deleted = val;
    return MPI_SUCCESS;
}

static int type_plus_one(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)k;
    ncopy++;
    last_extra = extra;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static void check_type_attrs(void)
{
    int kdup, knull, kplus, flag, extra = 0;
    void *v;
    MPI_Datatype t, d;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &kdup, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &knull, NULL);
    MPI_Type_create_keyval(type_plus_one, type_delete, &kplus, &extra);
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, kdup, V(10));
    MPI_Type_set_attr(t, knull, V(20));
    MPI_Type_set_attr(t, kplus, V(30 + me));
    MPI_Type_get_attr(t, kplus, &v, &flag);
    EXPECT(flag == 1 && v == V(30 + me), "get: flag %d value %ld", flag, (long)v);
    ncopy = ndelete = 0;
    MPI_Type_dup(t, &d);
    EXPECT(ncopy == 1 && last_extra == &extra, "Type_dup: %d user copies", ncopy);
    MPI_Type_get_attr(d, kdup, &v, &flag);
    EXPECT(flag == 1 && v == V(10), "MPI_TYPE_DUP_FN: flag %d value %ld", flag, (long)v);
    MPI_Type_get_attr(d, knull, &v, &flag);
    EXPECT(flag == 0, "MPI_TYPE_NULL_COPY_FN copied the attribute");
    MPI_Type_get_attr(d, kplus, &v, &flag);
    EXPECT(flag == 1 && v == V(31 + me), "user copy: flag %d value %ld", flag, (long)v);
    MPI_Type_delete_attr(d, kdup);
    EXPECT(ndelete == 1 && last_deleted == V(10), "Type_delete_attr: %d deletes", ndelete);
    MPI_Type_free(&d);
    EXPECT(ndelete == 2 && last_deleted == V(31 + me), "free of the dup: %d deletes", ndelete);
    MPI_Type_free(&t);
    EXPECT(ndelete == 5, "free of the original: %d deletes in all, expected 5", ndelete);
    /* A predefined type holds attributes too. */
    MPI_Type_set_attr(MPI_INT, kdup, V(99));
    MPI_Type_get_attr(MPI_INT, kdup, &v, &flag);
    EXPECT(flag == 1 && v == V(99), "MPI_INT's attribute: flag %d", flag);
    MPI_Type_delete_attr(MPI_INT, kdup);
    MPI_Type_get_attr(MPI_INT, kdup, &v, &flag);
    EXPECT(flag == 0, "MPI_INT's attribute still there after delete");
    MPI_Type_free_keyval(&kdup);
    MPI_Type_free_keyval(&knull);
    MPI_Type_free_keyval(&kplus);
    EXPECT(kdup == MPI_KEYVAL_INVALID, "Type_free_keyval left %d", kdup);
    report("type attributes: Type_create_keyval, set/get/delete, Type_dup copies, Type_free");
}

/* Runs inside MPI_Finalize, after the closing line. */
static int self_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c;
    (void)k;
    (void)extra;
    if (me == 0)
        printf("# MPI_Finalize deleted the MPI_COMM_SELF attribute (value %ld)\n", (long)val);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "attrs"))
        return 0;
    check_predefined();
    check_set_get_delete();
    check_dup_free();
    check_mpi1();
    check_type_attrs();
    int k;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, k, V(77));
    return finish("attrs");
}
