/*
 * errh.c: error classes and their strings, error handlers (the predefined
 * MPI_ERRORS_ARE_FATAL and MPI_ERRORS_RETURN, user ones), and err_raise, through which
 * every MPI function reports an error.
 */
#include "mpi_impl.h"
#include <stdio.h>
#include <stdlib.h>

#define EH_MAGIC 0x45724872u /* "ErHr": set while the object is alive */

enum { EH_FATAL, EH_RETURN, EH_USER };

struct mpi_errhandler_s {
    uint32_t magic;
    int refs;       /* the user's handles and the communicators using it */
    int predefined; /* never freed */
    int kind;
    MPI_Comm_errhandler_function *fn; /* EH_USER */
};

struct mpi_errhandler_s mpi_errors_are_fatal_ = {EH_MAGIC, 1, 1, EH_FATAL, NULL};
struct mpi_errhandler_s mpi_errors_return_ = {EH_MAGIC, 1, 1, EH_RETURN, NULL};

/* One distinct string per class; the class's name first, so that a message can be
 * looked up in the standard. */
static const char *const strings[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype (null, freed or not committed)",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag argument",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument of some other kind",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error in the MPI library",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in the status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address for MPI_Free_mem",
    [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: info key too long",
    [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: info value too long",
    [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: info key not defined",
    [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: error spawning processes",
    [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
    [MPI_ERR_NAME] = "MPI_ERR_NAME: service name not published",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size argument",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement argument",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong flavor of window",
    [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
    [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: collective arguments differ between processes",
    [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
    [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
    [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: not enough space",
    [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
    [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: data conversion failed",
    [MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
    [MPIX_ERR_PROC_FAILED] = "MPIX_ERR_PROC_FAILED: a process of the job failed, or the "
                             "connection to its node did",
    [MPI_ERR_LASTCODE] = "MPI_ERR_LASTCODE: last error code",
};

static const char *string_of(int code)
{
    int cls;
    const char *u;
    if (code >= 0 && code <= MPI_ERR_LASTCODE)
        return strings[code];
    if (err_user_code(code, &cls, &u))
        return u ? u : "";
    return "unknown error code";
}

/* Task context: 1 if code is a predefined or an added error code. */
static int known(int code)
{
    int cls;
    const char *u;
    return (code >= 0 && code <= MPI_ERR_LASTCODE) || err_user_code(code, &cls, &u);
}

static int valid(MPI_Errhandler h)
{
    return h && h->magic == EH_MAGIC && h->refs > 0;
}

/* Task context. */
void err_retain(MPI_Errhandler h)
{
    if (h && !h->predefined)
        h->refs++;
}

/* Task context. */
void err_release(MPI_Errhandler h)
{
    if (!h || h->predefined || --h->refs > 0)
        return;
    h->magic = 0;
    free(h);
}

/* Calls handler h for error `code` of function fn on comm (NULL: the world). */
static void invoke(MPI_Errhandler h, MPI_Comm comm, int code, const char *fn)
{
    if (!h || h->kind == EH_FATAL) {
        fprintf(stderr, "MPI error in %s: %s\n", fn, string_of(code));
        fflush(stderr);
        mpi_abort_hook(code);
    }
    if (h->kind == EH_USER) {
        MPI_Comm c = comm ? comm : MPI_COMM_WORLD;
        int e = code;
        h->fn(&c, &e);
    }
}

/* Task context. */
void err_report(MPI_Comm comm, int code, const char *fn)
{
    invoke(comm ? comm->errh : mpi_comm_world_.errh, comm, code, fn);
}

/* Any context; see mpi_impl.h. */
int err_engine_error(int e)
{
    switch (e) {
    case MPE_OK:
        return MPI_SUCCESS;
    case MPE_ETRUNCATE:
        return MPI_ERR_TRUNCATE;
    case MPE_ERANK:
        return MPI_ERR_RANK;
    case MPE_ENOMEM:
        return MPI_ERR_NO_MEM;
    case MPE_EINVAL: /* a graph the validator refused: the caller's argument */
        return MPI_ERR_ARG;
    case MPE_EPEER:
        return MPIX_ERR_PROC_FAILED;
    default: /* a code the engine does not define: our inconsistency */
        return MPI_ERR_INTERN;
    }
}

/* Task context. */
int err_unimplemented(const char *fn)
{
    fprintf(stderr, "%s is not implemented\n", fn);
    fflush(stderr);
    mpi_abort_hook(MPI_ERR_UNSUPPORTED_OPERATION);
}

/* --- MPI functions --------------------------------------------------------------------- */

/* Task context. */
int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen || !known(errorcode))
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Error_string");
    const char *s = string_of(errorcode);
    int n = 0;
    while (s[n] && n < MPI_MAX_ERROR_STRING - 1) {
        string[n] = s[n];
        n++;
    }
    string[n] = 0;
    *resultlen = n;
    return MPI_SUCCESS;
}

/* Task context. Every predefined code is its own class; added codes have theirs
 * (errh_user.c). */
int MPI_Error_class(int errorcode, int *errorclass)
{
    const char *u;
    if (!errorclass || !known(errorcode))
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Error_class");
    if (!err_user_code(errorcode, errorclass, &u))
        *errorclass = errorcode;
    return MPI_SUCCESS;
}

static int create(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler,
                  const char *fn)
{
    if (!function || !errhandler)
        return err_raise(NULL, MPI_ERR_ARG, fn);
    MPI_Errhandler h = malloc(sizeof *h);
    if (!h)
        return err_raise(NULL, MPI_ERR_NO_MEM, fn);
    *h = (struct mpi_errhandler_s){EH_MAGIC, 1, 0, EH_USER, function};
    *errhandler = h;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return create(function, errhandler, "MPI_Comm_create_errhandler");
}

/* Task context. */
int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return create(function, errhandler, "MPI_Errhandler_create");
}

static int set(MPI_Comm comm, MPI_Errhandler errhandler, const char *fn)
{
    if (!comm)
        return err_raise(NULL, MPI_ERR_COMM, fn);
    if (!valid(errhandler))
        return err_raise(comm, MPI_ERR_ARG, fn);
    err_retain(errhandler);
    err_release(comm->errh);
    comm->errh = errhandler;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return set(comm, errhandler, "MPI_Comm_set_errhandler");
}

/* Task context. */
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return set(comm, errhandler, "MPI_Errhandler_set");
}

/* The handle returned is a new reference (MPI: the caller frees it). */
static int get(MPI_Comm comm, MPI_Errhandler *errhandler, const char *fn)
{
    if (!comm)
        return err_raise(NULL, MPI_ERR_COMM, fn);
    if (!errhandler)
        return err_raise(comm, MPI_ERR_ARG, fn);
    *errhandler = comm->errh ? comm->errh : MPI_ERRORS_ARE_FATAL;
    err_retain(*errhandler);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return get(comm, errhandler, "MPI_Comm_get_errhandler");
}

/* Task context. */
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return get(comm, errhandler, "MPI_Errhandler_get");
}

/* Task context. */
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    if (!comm)
        return err_raise(NULL, MPI_ERR_COMM, "MPI_Comm_call_errhandler");
    invoke(comm->errh, comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

/* Task context. Predefined handlers may be freed too (MPI_Comm_get_errhandler hands them
 * out as references): only the handle is cleared then. */
int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler || !valid(*errhandler))
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
    err_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
