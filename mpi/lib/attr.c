/*
 * attr.c: communicator attributes (caching): keyvals with their copy and delete callbacks,
 * the values cached on communicators, and the predefined attributes (MPI_TAG_UB, ...),
 * with the MPI-1 names (MPI_Keyval_create, MPI_Attr_put, ...) as aliases.
 *
 * A keyval is an index into a table, offset by KEYVAL_BASE so it never equals a predefined
 * key (mpi.h: 1 .. MPI_WIN_MODEL) or MPI_KEYVAL_INVALID. It is reference counted: the
 * program's handle holds one reference and each attribute using it one more, so
 * MPI_Comm_free_keyval while attributes remain leaves their delete callbacks working (as
 * MPI requires); the slot is reused once the count drops to 0.
 *
 * Callbacks: MPI_Comm_dup calls the copy callback of every attribute of the parent
 * (attr_copy_all); MPI_Comm_free (attr_delete_all), MPI_Comm_delete_attr and an
 * MPI_Comm_set_attr that replaces a value call the delete callback with the old value;
 * MPI_Finalize deletes MPI_COMM_SELF's attributes first (MPI-3.1 8.7.1: libraries hook
 * their clean-up there), then MPI_COMM_WORLD's. A callback that returns an error makes the
 * call fail with that code.
 */
#include "mpi_impl.h"
#include <limits.h>
#include <stdlib.h>

#define KEYVAL_BASE 64 /* above every predefined attribute key of mpi.h */

struct keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs; /* 0: free slot */
};

/* One cached value; a communicator's list is newest first. */
struct attr {
    struct attr *next;
    int keyval;
    void *val;
};

static struct keyval *keyvals; /* the rank's table (malloc), grown by doubling */
static int nkeyvals;

/* The predefined attributes' values, returned by address as MPI requires. MPI_IO: every
 * rank can do I/O (MPI_ANY_SOURCE); MPI_HOST: no host process (MPI_PROC_NULL); the
 * clocks of different nodes are not synchronised (MPI_WTIME_IS_GLOBAL 0); one application
 * (MPI_APPNUM 0). MPI_UNIVERSE_SIZE and MPI_LASTUSEDCODE are filled in when read. */
static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
           appnum = 0, universe_size = 0, lastusedcode = MPI_ERR_LASTCODE;

/* Task context: the keyval's entry, or NULL if k is no live user keyval. */
static struct keyval *kv_get(int k)
{
    int i = k - KEYVAL_BASE;
    if (i < 0 || i >= nkeyvals || keyvals[i].refs <= 0)
        return NULL;
    return &keyvals[i];
}

/* Task context. */
static void kv_release(int k)
{
    keyvals[k - KEYVAL_BASE].refs--;
}

/* Task context: the value of a predefined key, or NULL if k is none. */
static int *predefined(int k)
{
    switch (k) {
    case MPI_TAG_UB:
        return &tag_ub;
    case MPI_HOST:
        return &host;
    case MPI_IO:
        return &io;
    case MPI_WTIME_IS_GLOBAL:
        return &wtime_global;
    case MPI_APPNUM:
        return &appnum;
    case MPI_UNIVERSE_SIZE:
        universe_size = mpi_comm_world_.size;
        return &universe_size;
    case MPI_LASTUSEDCODE:
        lastusedcode = err_last_code();
        return &lastusedcode;
    default:
        return NULL;
    }
}

/* Task context. */
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                           int *keyval, void *extra)
{
    if (!keyval)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval");
    int i = 0;
    while (i < nkeyvals && keyvals[i].refs > 0)
        i++;
    if (i == nkeyvals) {
        int n = nkeyvals ? 2 * nkeyvals : 16;
        struct keyval *t = realloc(keyvals, sizeof *t * (size_t)n);
        if (!t)
            return err_raise(NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_keyval");
        for (int j = nkeyvals; j < n; j++)
            t[j].refs = 0;
        keyvals = t;
        nkeyvals = n;
    }
    keyvals[i] = (struct keyval){copy ? copy : MPI_COMM_NULL_COPY_FN,
                                 del ? del : MPI_COMM_NULL_DELETE_FN, extra, 1};
    *keyval = KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_free_keyval(int *keyval)
{
    if (!keyval || !kv_get(*keyval))
        return err_raise(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    kv_release(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Task context: the attribute of keyval k on c and the link pointing at it, or NULL. */
static struct attr **find(MPI_Comm c, int k)
{
    struct attr **pp = &c->attrs;
    while (*pp && (*pp)->keyval != k)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

/* Task context: unlink *pp and run its delete callback; MPI error code. On a callback
 * error the attribute stays (MPI: the call fails, the value is kept). */
static int remove_attr(MPI_Comm c, struct attr **pp)
{
    struct attr *a = *pp;
    struct keyval *kv = &keyvals[a->keyval - KEYVAL_BASE];
    /* Unlinked before the callback runs: it may use c's attributes itself. */
    *pp = a->next;
    int rc = kv->del(c, a->keyval, a->val, kv->extra);
    if (rc != MPI_SUCCESS) {
        a->next = c->attrs;
        c->attrs = a;
        return rc;
    }
    kv_release(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

/* Task context. A keyval whose handle was freed still names its attributes' entries: the attribute
 * calls accept a keyval with live references (kv_get), as MPI only forbids using the
 * freed handle, which the program no longer has. */
int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_set_attr");
    if (!kv_get(keyval))
        return err_raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    struct attr **pp = find(comm, keyval);
    if (pp) {
        struct keyval *kv = kv_get(keyval);
        int rc = kv->del(comm, keyval, (*pp)->val, kv->extra);
        if (rc != MPI_SUCCESS)
            return err_raise(comm, rc, "MPI_Comm_set_attr");
        (*pp)->val = val;
        return MPI_SUCCESS;
    }
    struct attr *a = malloc(sizeof *a);
    if (!a)
        return err_raise(comm, MPI_ERR_NO_MEM, "MPI_Comm_set_attr");
    *a = (struct attr){comm->attrs, keyval, val};
    comm->attrs = a;
    kv_get(keyval)->refs++;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (!flag || !val)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Comm_get_attr");
    int *p = predefined(keyval);
    if (p) {
        *(int **)val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!kv_get(keyval))
        return err_raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    struct attr **pp = find(comm, keyval);
    *flag = pp != NULL;
    if (pp)
        *(void **)val = (*pp)->val;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_delete_attr");
    if (!kv_get(keyval))
        return err_raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    struct attr **pp = find(comm, keyval);
    if (!pp)
        return err_raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    return err_raise(comm, remove_attr(comm, pp), "MPI_Comm_delete_attr");
}

/* Task context (MPI_Comm_dup, after `to` is made): copy callbacks of every attribute of
 * `from`, oldest first, so `to`'s list keeps the same order. MPI error code; on an error
 * the caller frees `to` (which deletes what was copied). */
int attr_copy_all(MPI_Comm from, MPI_Comm to)
{
    struct attr **tail = &to->attrs;
    for (struct attr *a = from->attrs; a; a = a->next) {
        struct keyval *kv = &keyvals[a->keyval - KEYVAL_BASE];
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy(from, a->keyval, kv->extra, a->val, &out, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        struct attr *n = malloc(sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        *n = (struct attr){NULL, a->keyval, out};
        kv->refs++;
        *tail = n;
        tail = &n->next;
    }
    return MPI_SUCCESS;
}

/* Task context (MPI_Comm_free, MPI_Finalize): delete every attribute of c, newest first;
 * the first callback error is returned and the remaining attributes stay. */
int attr_delete_all(MPI_Comm c)
{
    while (c->attrs) {
        int rc = remove_attr(c, &c->attrs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* --- MPI-1 names ---------------------------------------------------------------------- */

/* Task context. The MPI-1 callback types have the same signatures as the MPI-2 ones. */
int MPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra)
{
    return MPI_Comm_create_keyval(copy, del, keyval, extra);
}

/* Task context. */
int MPI_Keyval_free(int *keyval)
{
    return MPI_Comm_free_keyval(keyval);
}

/* Task context. */
int MPI_Attr_put(MPI_Comm comm, int keyval, void *val)
{
    return MPI_Comm_set_attr(comm, keyval, val);
}

/* Task context. */
int MPI_Attr_get(MPI_Comm comm, int keyval, void *val, int *flag)
{
    return MPI_Comm_get_attr(comm, keyval, val, flag);
}

/* Task context. */
int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return MPI_Comm_delete_attr(comm, keyval);
}
