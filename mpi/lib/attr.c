/*
 * attr.c: attributes (caching) on communicators and datatypes: keyvals with their copy
 * and delete callbacks, the values cached on objects, the predefined attributes of
 * communicators (MPI_TAG_UB, ...), and the MPI-1 names (MPI_Keyval_create, MPI_Attr_put,
 * ...) as aliases of the communicator functions.
 *
 * A keyval is an index into a table, offset by KEYVAL_BASE so it never equals a predefined
 * key (mpi.h: 1 .. MPI_WIN_MODEL) or MPI_KEYVAL_INVALID. It is reference counted: the
 * program's handle holds one reference and each attribute using it one more, so
 * MPI_Comm_free_keyval while attributes remain leaves their delete callbacks working (as
 * MPI requires); the slot is reused once the count drops to 0.
 *
 * Callbacks: MPI_Comm_dup and MPI_Type_dup call the copy callback of every attribute of
 * the original (attr_copy_all, attr_type_copy_all); MPI_Comm_free and MPI_Type_free
 * (attr_delete_all, attr_type_delete_all), the delete_attr calls and a set_attr that
 * replaces a value call the delete callback with the old value;
 * MPI_Finalize deletes MPI_COMM_SELF's attributes first (MPI-3.1 8.7.1: libraries hook
 * their clean-up there), then MPI_COMM_WORLD's. A callback that returns an error makes the
 * call fail with that code.
 */
#include "dtype_impl.h"
#include "mpi_impl.h"
#include <limits.h>
#include <stdlib.h>

#define KEYVAL_BASE 64 /* above every predefined attribute key of mpi.h */

/* The predefined attributes' values, returned by address as MPI requires. MPI_IO: every
 * rank can do I/O (MPI_ANY_SOURCE); MPI_HOST: no host process (MPI_PROC_NULL); the
 * clocks of different nodes are not synchronised (MPI_WTIME_IS_GLOBAL 0); one application
 * (MPI_APPNUM 0). MPI_UNIVERSE_SIZE and MPI_LASTUSEDCODE are filled in when read. */
static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
           appnum = 0, universe_size = 0, lastusedcode = MPI_ERR_LASTCODE;

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

/* What attributes hang on: communicators and datatypes (keyvals are of one kind). */
enum attr_kind { ATTR_COMM, ATTR_TYPE };

struct keyval {
    enum attr_kind kind;
    union {
        MPI_Comm_copy_attr_function *comm;
        MPI_Type_copy_attr_function *type;
    } copy;
    union {
        MPI_Comm_delete_attr_function *comm;
        MPI_Type_delete_attr_function *type;
    } del;
    void *extra;
    int refs; /* 0: free slot */
};

/* One cached value; an object's list is newest first. */
struct attr {
    struct attr *next;
    int keyval;
    void *val;
};

/* An object with attributes: its kind, its handle (an MPI_Comm or MPI_Datatype) and
 * its list. */
struct obj {
    enum attr_kind kind;
    void *h;
    struct attr **list;
};

static struct keyval *keyvals; /* the rank's table (malloc), grown by doubling */
static int nkeyvals;

/* Task context: the entry of keyval k if it is a live keyval of `kind`, else NULL. */
static struct keyval *kv_get(int k, enum attr_kind kind)
{
    int i = k - KEYVAL_BASE;
    if (i < 0 || i >= nkeyvals || keyvals[i].refs <= 0 || keyvals[i].kind != kind)
        return NULL;
    return &keyvals[i];
}

/* Task context: the callbacks, called with the object's own handle type. */
static int call_copy(const struct obj *o, int k, void *in, void *out, int *flag)
{
    struct keyval *kv = &keyvals[k - KEYVAL_BASE];
    if (o->kind == ATTR_COMM)
        return kv->copy.comm((MPI_Comm)o->h, k, kv->extra, in, out, flag);
    return kv->copy.type((MPI_Datatype)o->h, k, kv->extra, in, out, flag);
}

static int call_del(const struct obj *o, int k, void *val)
{
    struct keyval *kv = &keyvals[k - KEYVAL_BASE];
    if (o->kind == ATTR_COMM)
        return kv->del.comm((MPI_Comm)o->h, k, val, kv->extra);
    return kv->del.type((MPI_Datatype)o->h, k, val, kv->extra);
}

/* Task context: a new keyval of kind (callbacks already defaulted). MPI error code. */
static int kv_create(struct keyval kv, int *keyval)
{
    if (!keyval)
        return MPI_ERR_ARG;
    int i = 0;
    while (i < nkeyvals && keyvals[i].refs > 0)
        i++;
    if (i == nkeyvals) {
        int n = nkeyvals ? 2 * nkeyvals : 16;
        struct keyval *t = realloc(keyvals, sizeof *t * (size_t)n);
        if (!t)
            return MPI_ERR_NO_MEM;
        for (int j = nkeyvals; j < n; j++)
            t[j].refs = 0;
        keyvals = t;
        nkeyvals = n;
    }
    kv.refs = 1;
    keyvals[i] = kv;
    *keyval = KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

/* Task context: drop the program's handle of a keyval of kind. MPI error code. */
static int kv_free(enum attr_kind kind, int *keyval)
{
    if (!keyval || !kv_get(*keyval, kind))
        return MPI_ERR_KEYVAL;
    keyvals[*keyval - KEYVAL_BASE].refs--;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Task context: the attribute of keyval k on o and the link pointing at it, or NULL. */
static struct attr **find(const struct obj *o, int k)
{
    struct attr **pp = o->list;
    while (*pp && (*pp)->keyval != k)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

/* Task context: unlink *pp and run its delete callback; MPI error code. On a callback
 * error the attribute stays (MPI: the call fails, the value is kept). */
static int remove_attr(const struct obj *o, struct attr **pp)
{
    struct attr *a = *pp;
    /* Unlinked before the callback runs: it may use the object's attributes itself. */
    *pp = a->next;
    int rc = call_del(o, a->keyval, a->val);
    if (rc != MPI_SUCCESS) {
        a->next = *o->list;
        *o->list = a;
        return rc;
    }
    keyvals[a->keyval - KEYVAL_BASE].refs--;
    free(a);
    return MPI_SUCCESS;
}

/* Task context. A keyval whose handle was freed still names its attributes' entries: the
 * attribute calls accept a keyval with live references (kv_get), as MPI only forbids
 * using the freed handle, which the program no longer has. MPI error code. */
static int set_attr(const struct obj *o, int k, void *val)
{
    if (!kv_get(k, o->kind))
        return MPI_ERR_KEYVAL;
    struct attr **pp = find(o, k);
    if (pp) {
        int rc = call_del(o, k, (*pp)->val);
        if (rc == MPI_SUCCESS)
            (*pp)->val = val;
        return rc;
    }
    struct attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (struct attr){*o->list, k, val};
    *o->list = a;
    keyvals[k - KEYVAL_BASE].refs++;
    return MPI_SUCCESS;
}

/* Task context: *(void **)val and *flag as MPI_Comm_get_attr gives them. */
static int get_attr(const struct obj *o, int k, void *val, int *flag)
{
    if (!flag || !val)
        return MPI_ERR_ARG;
    if (!kv_get(k, o->kind))
        return MPI_ERR_KEYVAL;
    struct attr **pp = find(o, k);
    *flag = pp != NULL;
    if (pp)
        *(void **)val = (*pp)->val;
    return MPI_SUCCESS;
}

/* Task context. Deleting an attribute that is not set is an error (MPI_ERR_KEYVAL). */
static int delete_attr(const struct obj *o, int k)
{
    if (!kv_get(k, o->kind))
        return MPI_ERR_KEYVAL;
    struct attr **pp = find(o, k);
    return pp ? remove_attr(o, pp) : MPI_ERR_KEYVAL;
}

/* Task context: copy callbacks of every attribute of `from` onto `to`, oldest first, so
 * `to`'s list keeps the same order. MPI error code; on an error the caller frees `to`
 * (which deletes what was copied). */
static int copy_all(const struct obj *from, const struct obj *to)
{
    struct attr **tail = to->list;
    for (struct attr *a = *from->list; a; a = a->next) {
        void *out = NULL;
        int flag = 0;
        int rc = call_copy(from, a->keyval, a->val, &out, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        struct attr *n = malloc(sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        *n = (struct attr){NULL, a->keyval, out};
        keyvals[a->keyval - KEYVAL_BASE].refs++;
        *tail = n;
        tail = &n->next;
    }
    return MPI_SUCCESS;
}

/* Task context: delete every attribute of o, newest first; the first callback error is
 * returned and the remaining attributes stay. */
static int delete_all(const struct obj *o)
{
    while (*o->list) {
        int rc = remove_attr(o, o->list);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static struct obj comm_obj(MPI_Comm c)
{
    return (struct obj){ATTR_COMM, c, &c->attrs};
}

static struct obj type_obj(MPI_Datatype t)
{
    return (struct obj){ATTR_TYPE, t, &t->attrs};
}

/* --- communicators ------------------------------------------------------------------ */

/* Task context. */
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                           int *keyval, void *extra)
{
    struct keyval kv = {.kind = ATTR_COMM,
                        .copy.comm = copy ? copy : MPI_COMM_NULL_COPY_FN,
                        .del.comm = del ? del : MPI_COMM_NULL_DELETE_FN,
                        .extra = extra};
    return err_raise(NULL, kv_create(kv, keyval), "MPI_Comm_create_keyval");
}

/* Task context. */
int MPI_Comm_free_keyval(int *keyval)
{
    return err_raise(NULL, kv_free(ATTR_COMM, keyval), "MPI_Comm_free_keyval");
}

/* Task context. */
int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_set_attr");
    struct obj o = comm_obj(comm);
    return err_raise(comm, set_attr(&o, keyval, val), "MPI_Comm_set_attr");
}

/* Task context. The predefined attributes are on every communicator. */
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_get_attr");
    int *p = predefined(keyval);
    if (p && flag && val) {
        *(int **)val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct obj o = comm_obj(comm);
    return err_raise(comm, get_attr(&o, keyval, val, flag), "MPI_Comm_get_attr");
}

/* Task context. */
int MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_delete_attr");
    struct obj o = comm_obj(comm);
    return err_raise(comm, delete_attr(&o, keyval), "MPI_Comm_delete_attr");
}

/* Task context; see mpi_impl.h. */
int attr_copy_all(MPI_Comm from, MPI_Comm to)
{
    struct obj f = comm_obj(from), t = comm_obj(to);
    return copy_all(&f, &t);
}

/* Task context; see mpi_impl.h. */
int attr_delete_all(MPI_Comm c)
{
    struct obj o = comm_obj(c);
    return delete_all(&o);
}

/* --- datatypes ---------------------------------------------------------------------- */

/* Task context. */
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
                           int *keyval, void *extra)
{
    struct keyval kv = {.kind = ATTR_TYPE,
                        .copy.type = copy ? copy : MPI_TYPE_NULL_COPY_FN,
                        .del.type = del ? del : MPI_TYPE_NULL_DELETE_FN,
                        .extra = extra};
    return err_raise(NULL, kv_create(kv, keyval), "MPI_Type_create_keyval");
}

/* Task context. */
int MPI_Type_free_keyval(int *keyval)
{
    return err_raise(NULL, kv_free(ATTR_TYPE, keyval), "MPI_Type_free_keyval");
}

/* Task context. */
int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *val)
{
    if (!type)
        return err_raise(NULL, MPI_ERR_TYPE, "MPI_Type_set_attr");
    struct obj o = type_obj(type);
    return err_raise(NULL, set_attr(&o, keyval, val), "MPI_Type_set_attr");
}

/* Task context. */
int MPI_Type_get_attr(MPI_Datatype type, int keyval, void *val, int *flag)
{
    if (!type)
        return err_raise(NULL, MPI_ERR_TYPE, "MPI_Type_get_attr");
    struct obj o = type_obj(type);
    return err_raise(NULL, get_attr(&o, keyval, val, flag), "MPI_Type_get_attr");
}

/* Task context. */
int MPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
    if (!type)
        return err_raise(NULL, MPI_ERR_TYPE, "MPI_Type_delete_attr");
    struct obj o = type_obj(type);
    return err_raise(NULL, delete_attr(&o, keyval), "MPI_Type_delete_attr");
}

/* Task context (MPI_Type_dup); see mpi_impl.h. */
int attr_type_copy_all(MPI_Datatype from, MPI_Datatype to)
{
    struct obj f = type_obj(from), t = type_obj(to);
    return copy_all(&f, &t);
}

/* Task context (MPI_Type_free); see mpi_impl.h. */
int attr_type_delete_all(MPI_Datatype t)
{
    struct obj o = type_obj(t);
    return delete_all(&o);
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
