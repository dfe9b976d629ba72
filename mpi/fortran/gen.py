#!/usr/bin/env python3
"""gen.py: the Fortran bindings from one table (mpi/fortran/bindings.def).

    gen.py TABLE MPI_H FORT_RT_H OUTDIR

writes OUTDIR/mpi_fort.c (the C wrappers mpi_NAME_ in gfortran's convention: lower case,
one trailing underscore, every argument by reference, CHARACTER lengths appended as
size_t; and the predefined handle tables), OUTDIR/mpif.h (fixed form, also valid free
form) and OUTDIR/mpi.f90 (the `mpi` module: the same constants and explicit interfaces,
choice buffers unchecked through gfortran's NO_ARG_CHECK). Integer constants take their
values from the #defines of mpi.h and fort_rt.h, so they are written nowhere else.
"""
import re
import sys

KINDS = ["comm", "dtype", "op", "group", "req"]
C_TYPE = {"comm": "MPI_Comm", "dtype": "MPI_Datatype", "op": "MPI_Op", "group": "MPI_Group",
          "req": "MPI_Request"}
C_KIND = {"comm": "FORT_COMM", "dtype": "FORT_DTYPE", "op": "FORT_OP", "group": "FORT_GROUP",
          "req": "FORT_REQ"}
# The common blocks of the sentinels (fort_rt.h declares their C side).
SENTINELS = [("MPI_BOTTOM", "ukmpi_f_bottom", ""), ("MPI_IN_PLACE", "ukmpi_f_in_place", ""),
             ("MPI_STATUS_IGNORE", "ukmpi_f_status_ignore", "(MPI_STATUS_SIZE)"),
             ("MPI_STATUSES_IGNORE", "ukmpi_f_statuses_ignore", "(MPI_STATUS_SIZE,1)")]
FIXED_WIDTH = 72  # fixed-form statements end at column 72
FREE_WIDTH = 100  # free-form lines, well under gfortran's 132


def defines(path):
    """The integer #defines of a C header: NAME -> int."""
    vals = {}
    for line in open(path):
        m = re.match(r"#define\s+(\w+)\s+\(?(-?\d+)\)?\s*(/\*.*)?$", line)
        if m:
            vals[m.group(1)] = int(m.group(2))
    return vals


def parse(table, cdefs):
    consts, handles, fns = [], {k: [] for k in KINDS}, []
    for n, line in enumerate(open(table), 1):
        w = line.split("#", 1)[0].split()
        if not w:
            continue
        where = "%s:%d" % (table, n)
        if w[0] == "const":
            for name in w[1:]:
                if name not in cdefs:
                    sys.exit("%s: %s is no integer #define of mpi.h" % (where, name))
                consts.append((name, cdefs[name]))
        elif w[0] == "fconst":
            if w[2] not in cdefs:
                sys.exit("%s: %s is no integer #define of fort_rt.h" % (where, w[2]))
            consts.append((w[1], cdefs[w[2]]))
        elif w[0] == "handle":
            handles[w[1]].append((w[2], w[3]))
        elif w[0] == "fn":
            if w[2:3] == ["->"]:
                fns.append((w[1], w[3], []))
                continue
            args = []
            for a in w[2:]:
                name, kind = a.split(":")
                m = re.match(r"(\w+)\((\w+)\)$", kind)
                kind, par = (m.group(1), m.group(2)) if m else (kind, None)
                args.append((name, kind, par))
            fns.append((w[1], None, args))
        else:
            sys.exit("%s: unknown line %r" % (where, w[0]))
    return consts, handles, fns


def c_wrapper(name, ret, args):
    """One C wrapper: its prototype line and its definition."""
    cname = "MPI_" + name
    fname = "mpi_" + name.lower() + "_"
    if ret == "double":
        proto = "double %s(void)" % fname
        return proto, "%s\n{\n    return %s();\n}\n" % (proto, cname)
    params, lens, pre, call, post = [], [], [], [], []
    allocs = []  # arrays allocated so far, freed again when a later allocation fails
    for a, kind, par in args:
        if kind == "null":
            call.append("NULL")
        elif kind == "int":
            params.append("const MPI_Fint *%s" % a)
            call.append("*" + a)
        elif kind in ("int_out", "ints", "ints_io", "ints_out"):
            params.append("MPI_Fint *%s" % a)
            call.append(a)
        elif kind == "logical":
            params.append("const MPI_Fint *%s" % a)
            call.append("*%s != FORT_FALSE" % a)
        elif kind == "logicals":
            # gfortran's LOGICAL is a 4-byte 0 or 1: the array is C's int array as it is.
            params.append("MPI_Fint *%s" % a)
            call.append(a)
        elif kind == "index_out":
            params.append("MPI_Fint *%s" % a)
            pre.append("int c_%s = MPI_UNDEFINED;" % a)
            call.append("&c_" + a)
            post.append("*%s = c_%s == MPI_UNDEFINED ? MPI_UNDEFINED : c_%s + 1;" % (a, a, a))
        elif kind == "logical_out":
            params.append("MPI_Fint *%s" % a)
            pre.append("int c_%s = 0;" % a)
            call.append("&c_" + a)
            post.append("*%s = c_%s ? FORT_TRUE : FORT_FALSE;" % (a, a))
        elif kind == "buf":
            params.append("void *%s" % a)
            call.append("fort_buf(%s)" % a)
        elif kind in C_TYPE:
            params.append("const MPI_Fint *%s" % a)
            call.append("(%s)fort_f2c(%s, *%s)" % (C_TYPE[kind], C_KIND[kind], a))
        elif kind.endswith("_out") and kind[:-4] in C_TYPE:
            k = kind[:-4]
            params.append("MPI_Fint *%s" % a)
            pre.append("%s c_%s = NULL;" % (C_TYPE[k], a))
            call.append("&c_" + a)
            post.append("*%s = fort_c2f(%s, c_%s);" % (a, C_KIND[k], a))
        elif kind.endswith("_io") and kind[:-3] in C_TYPE:
            k = kind[:-3]
            params.append("MPI_Fint *%s" % a)
            pre.append("%s c_%s = (%s)fort_f2c(%s, *%s);" % (C_TYPE[k], a, C_TYPE[k], C_KIND[k], a))
            call.append("&c_" + a)
            post.append("if (!c_%s) {\n        fort_release(%s, *%s);\n"
                        "        *%s = FORT_NULL_HANDLE;\n    } else {\n"
                        "        *%s = fort_c2f(%s, c_%s);\n    }" %
                        (a, C_KIND[k], a, a, a, C_KIND[k], a))
        elif kind == "reqs":
            params.append("MPI_Fint *%s" % a)
            pre.append("int n_%s = *%s > 0 ? *%s : 0;" % (a, par, par))
            pre.append("MPI_Request *c_%s = malloc(((size_t)n_%s + 1) * sizeof(*c_%s));" % (a, a, a))
            pre.append("if (!c_%s) {\n        *ierror = MPI_ERR_NO_MEM;\n        return;\n    }" % a)
            allocs.append("c_" + a)
            pre.append("for (int i = 0; i < n_%s; i++)\n        c_%s[i] = (MPI_Request)fort_f2c("
                       "FORT_REQ, %s[i]);" % (a, a, a))
            call.append("c_" + a)
            post.append("for (int i = 0; i < n_%s; i++) {\n        if (!c_%s[i]) {\n"
                        "            fort_release(FORT_REQ, %s[i]);\n"
                        "            %s[i] = FORT_NULL_HANDLE;\n        }\n    }\n"
                        "    free(c_%s);" % (a, a, a, a, a))
        elif kind == "status_out":
            params.append("MPI_Fint *%s" % a)
            pre.append("MPI_Status c_%s;" % a)
            call.append("fort_status_ignored(%s) ? MPI_STATUS_IGNORE : &c_%s" % (a, a))
            post.append("if (!fort_status_ignored(%s))\n        fort_status_c2f(&c_%s, %s);" % (a, a, a))
        elif kind == "status_in":
            params.append("const MPI_Fint *%s" % a)
            pre.append("MPI_Status c_%s;" % a)
            pre.append("fort_status_f2c(%s, &c_%s);" % (a, a))
            call.append("&c_" + a)
        elif kind == "statuses":
            params.append("MPI_Fint *%s" % a)
            pre.append("int ign_%s = fort_statuses_ignored(%s);" % (a, a))
            pre.append("MPI_Status *c_%s = ign_%s ? MPI_STATUSES_IGNORE\n"
                       "        : malloc(((size_t)(*%s > 0 ? *%s : 0) + 1) * sizeof(*c_%s));"
                       % (a, a, par, par, a))
            pre.append("if (!ign_%s && !c_%s) {\n%s        *ierror = MPI_ERR_NO_MEM;\n"
                       "        return;\n    }" %
                       (a, a, "".join("        free(%s);\n" % f for f in allocs)))
            call.append("c_" + a)
            post.append("if (!ign_%s) {\n        for (int i = 0; i < *%s; i++)\n"
                        "            fort_status_c2f(&c_%s[i], &%s[i * FORT_STATUS_SIZE]);\n"
                        "        free(c_%s);\n    }" % (a, par, a, a, a))
        elif kind == "str_out":
            params.append("char *%s" % a)
            lens.append("size_t %s_len" % a)
            pre.append("char c_%s[%s + 1];" % (a, par))
            pre.append("c_%s[0] = '\\0';" % a)
            call.append("c_" + a)
            post.append("fort_str_c2f(c_%s, %s, %s_len);" % (a, a, a))
        else:
            sys.exit("%s: unknown argument kind %s" % (name, kind))
    params.append("MPI_Fint *ierror")
    proto = "void %s(%s)" % (fname, ", ".join(params + lens))
    body = ["    " + p for p in pre]
    body.append("    int rc = %s(%s);" % (cname, ", ".join(call)))
    body += ["    " + p for p in post]
    body.append("    *ierror = rc;")
    return proto, "%s\n{\n%s\n}\n" % (proto, "\n".join(body))


def write_c(out, handles, fns):
    o = ["/* mpi_fort.c: generated by mpi/fortran/gen.py from mpi/fortran/bindings.def. */",
         '#include "fort_rt.h"', "#include <stdlib.h>", ""]
    for k in KINDS:
        objs = ["NULL"] + ["(void *)%s" % c for _, c in handles[k]]
        o.append("static void *const predef_%s[] = {%s};" % (k, ", ".join(objs)))
    o.append("const struct fort_predef fort_predefs[FORT_NKINDS] = {")
    for k in KINDS:
        o.append("    [%s] = {predef_%s, sizeof(predef_%s) / sizeof(predef_%s[0])}," % (C_KIND[k], k, k, k))
    o += ["};", ""]
    defs = []
    for name, ret, args in fns:
        proto, body = c_wrapper(name, ret, args)
        o.append(proto + ";")
        defs.append("/* A Fortran program's CALL MPI_%s. */\n%s" % (name.upper(), body))
    o.append("")
    o += defs
    open(out, "w").write("\n".join(o))


def fixed(lines):
    """Statements folded for fixed form: continuation '&' in column 6."""
    res = []
    for line in lines:
        text = "      " + line
        while len(text) > FIXED_WIDTH:
            cut = text.rfind(",", 0, FIXED_WIDTH) + 1
            res.append(text[:cut])
            text = "     &" + text[cut:]
        res.append(text)
    return res


def constants(consts, handles):
    """(NAME, VALUE) of every integer parameter: constants and handle integers."""
    vals = list(consts)
    for k in KINDS:
        null = {"comm": "MPI_COMM_NULL", "dtype": "MPI_DATATYPE_NULL", "op": "MPI_OP_NULL",
                "group": "MPI_GROUP_NULL", "req": "MPI_REQUEST_NULL"}[k]
        vals.append((null, 0))
        vals += [(f, i) for i, (f, _) in enumerate(handles[k], 1)]
    return vals


def write_mpif(out, consts, handles):
    o = ["! mpif.h: generated by mpi/fortran/gen.py from mpi/fortran/bindings.def.",
         "! Fixed form, also valid as free form."]
    st = []
    for n, v in constants(consts, handles):
        st += ["integer %s" % n, "parameter (%s=%d)" % (n, v)]
    for f, blk, dims in SENTINELS:
        st += ["integer %s%s" % (f, dims), "common /%s/ %s" % (blk, f)]
    st += ["double precision MPI_WTIME, MPI_WTICK", "external MPI_WTIME, MPI_WTICK"]
    open(out, "w").write("\n".join(o + fixed(st)) + "\n")


FTYPE = {"int": "integer, intent(in) :: %s", "int_out": "integer, intent(out) :: %s",
         "ints": "integer, intent(in) :: %s(*)", "logical_out": "logical, intent(out) :: %s",
         "ints_io": "integer, intent(inout) :: %s(*)", "ints_out": "integer, intent(out) :: %s(*)",
         "logical": "logical, intent(in) :: %s", "logicals": "logical, intent(in) :: %s(*)",
         "index_out": "integer, intent(out) :: %s",
         "status_out": "integer, intent(out) :: %s(MPI_STATUS_SIZE)",
         "status_in": "integer, intent(in) :: %s(MPI_STATUS_SIZE)",
         "reqs": "integer, intent(inout) :: %s(*)",
         "statuses": "integer :: %s(MPI_STATUS_SIZE, *)",
         "str_out": "character(len=*), intent(out) :: %s"}


def free(line):
    """A free-form statement folded after commas, '&' ending each continued line."""
    res = []
    while len(line) > FREE_WIDTH:
        cut = line.rfind(",", 0, FREE_WIDTH - 1) + 1
        res.append(line[:cut] + " &")
        line = "    " + line[cut:].lstrip()
    return res + [line]


def write_module(out, consts, handles, fns):
    o = ["! mpi.f90: generated by mpi/fortran/gen.py from mpi/fortran/bindings.def.",
         "module mpi", "implicit none"]
    for n, v in constants(consts, handles):
        o.append("integer, parameter :: %s = %d" % (n, v))
    for f, blk, dims in SENTINELS:
        o += ["integer :: %s%s" % (f, dims), "common /%s/ %s" % (blk, f)]
    o.append("interface")
    for name, ret, args in fns:
        fname = "MPI_" + name
        if ret == "double":
            o += ["double precision function %s()" % fname, "end function %s" % fname]
            continue
        names = [a for a, k, _ in args if k != "null"] + ["ierror"]
        o += free("subroutine %s(%s)" % (fname, ", ".join(names)))
        if any(k in ("status_out", "status_in", "statuses") for _, k, _ in args):
            o.append("import :: MPI_STATUS_SIZE")
        for a, kind, _ in args:
            if kind == "null":
                continue
            if kind == "buf":
                o += ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % a, "type(*), dimension(*) :: %s" % a]
            elif kind in FTYPE:
                o.append(FTYPE[kind] % a)
            elif kind in C_TYPE:
                o.append("integer, intent(in) :: %s" % a)
            elif kind.endswith("_out"):
                o.append("integer, intent(out) :: %s" % a)
            elif kind.endswith("_io"):
                o.append("integer, intent(inout) :: %s" % a)
            else:
                sys.exit("%s: no Fortran type for kind %s" % (name, kind))
        o += ["integer, intent(out) :: ierror", "end subroutine %s" % fname]
    o += ["end interface", "end module mpi"]
    open(out, "w").write("\n".join(o) + "\n")


def main():
    table, mpi_h, rt_h, outdir = sys.argv[1:5]
    cdefs = defines(mpi_h)
    cdefs.update(defines(rt_h))
    consts, handles, fns = parse(table, cdefs)
    write_c(outdir + "/mpi_fort.c", handles, fns)
    write_mpif(outdir + "/mpif.h", consts, handles)
    write_module(outdir + "/mpi.f90", consts, handles, fns)


if __name__ == "__main__":
    main()
