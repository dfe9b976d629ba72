/*
 * errh_user.c: error classes and codes the program adds (MPI_Add_error_class,
 * MPI_Add_error_code, MPI_Add_error_string), which errh.c's MPI_Error_class,
 * MPI_Error_string and fatal messages look up here.
 *
 * They are numbered after MPI_ERR_LASTCODE in the order they are made, classes and codes
 * alike; a class is its own code. The highest so far is the MPI_LASTUSEDCODE attribute
 * (attr.c). Like the rest of the library this is per rank: MPI requires every process to
 * add the same classes and codes in the same order if it wants the same numbers.
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

struct ucode {
    int cls;   /* its class: itself for a class */
    char *str; /* MPI_Add_error_string's copy, or NULL */
};

static struct ucode *ucodes; /* ucodes[i]: code MPI_ERR_LASTCODE + 1 + i */
static int nucodes, capucodes;

/* Task context: the entry of a user code, or NULL. */
static struct ucode *lookup(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    return i >= 0 && i < nucodes ? &ucodes[i] : NULL;
}

/* Task context: 1 if code is a code the program added; *cls and *str (NULL: no string
 * set) describe it. */
int err_user_code(int code, int *cls, const char **str)
{
    struct ucode *u = lookup(code);
    if (!u)
        return 0;
    *cls = u->cls;
    *str = u->str;
    return 1;
}

/* Task context: the highest error code in use (MPI_LASTUSEDCODE). */
int err_last_code(void)
{
    return MPI_ERR_LASTCODE + nucodes;
}

/* Task context: a new code of class cls (-1: a new class); MPI error code. */
static int add(int cls, int *out)
{
    if (nucodes == capucodes) {
        int cap = capucodes ? 2 * capucodes : 16;
        struct ucode *t = realloc(ucodes, sizeof *t * (size_t)cap);
        if (!t)
            return MPI_ERR_NO_MEM;
        ucodes = t;
        capucodes = cap;
    }
    int code = MPI_ERR_LASTCODE + 1 + nucodes;
    ucodes[nucodes++] = (struct ucode){cls < 0 ? code : cls, NULL};
    *out = code;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Add_error_class(int *errorclass)
{
    if (!errorclass)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Add_error_class");
    return err_raise(NULL, add(-1, errorclass), "MPI_Add_error_class");
}

/* Task context. errorclass: a predefined class or one the program added. */
int MPI_Add_error_code(int errorclass, int *errorcode)
{
    struct ucode *u = lookup(errorclass);
    int is_class = (errorclass >= MPI_SUCCESS && errorclass <= MPI_ERR_LASTCODE) ||
                   (u && u->cls == errorclass);
    if (!errorcode || !is_class)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
    return err_raise(NULL, add(errorclass, errorcode), "MPI_Add_error_code");
}

/* Task context. Only for added codes (MPI: the predefined strings stay); a second call
 * replaces the string. */
int MPI_Add_error_string(int errorcode, const char *string)
{
    struct ucode *u = lookup(errorcode);
    if (!u || !string || strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
    char *s = strdup(string);
    if (!s)
        return err_raise(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
    free(u->str);
    u->str = s;
    return MPI_SUCCESS;
}
