/*
 * dtype_query.c: what programs ask of a datatype: size and extents, its constructor
 * (envelope and contents), its name; addresses; MPI_Pack and MPI_Unpack.
 */
#include "dtype_impl.h"
#include <limits.h>
#include <string.h>

static int check(MPI_Datatype dt, const void *out)
{
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    return out ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* Task context. */
int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    int rc = check(datatype, size);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_size");
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    int rc = check(datatype, size);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_size_x");
    *size = (MPI_Count)datatype->size;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    int rc = check(datatype, lb && extent ? lb : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_extent");
    *lb = datatype->lb;
    *extent = datatype->ub - datatype->lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    int rc = check(datatype, lb && extent ? lb : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_extent_x");
    *lb = datatype->lb;
    *extent = datatype->ub - datatype->lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    int rc = check(datatype, true_lb && true_extent ? true_lb : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_true_extent");
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_ub - datatype->true_lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    int rc = check(datatype, true_lb && true_extent ? true_lb : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_true_extent_x");
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_ub - datatype->true_lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    int rc = check(datatype, extent);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_extent");
    *extent = datatype->ub - datatype->lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    int rc = check(datatype, displacement);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_lb");
    *displacement = datatype->lb;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    int rc = check(datatype, displacement);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_ub");
    *displacement = datatype->ub;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    int rc = check(datatype,
                   num_integers && num_addresses && num_datatypes && combiner ? combiner : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_envelope");
    *num_integers = datatype->nints;
    *num_addresses = datatype->naddrs;
    *num_datatypes = datatype->ntypes;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}

/* Task context. The returned derived types are new references, for the caller to free
 * (MPI's rule), so each gets a dt_retain. */
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents";
    MPI_Datatype t = datatype;
    if (!dt_valid(t) || t->predefined)
        return err_raise(NULL, MPI_ERR_TYPE, fn);
    if (max_integers < t->nints || max_addresses < t->naddrs || max_datatypes < t->ntypes ||
        (t->nints && !array_of_integers) || (t->naddrs && !array_of_addresses) ||
        (t->ntypes && !array_of_datatypes))
        return err_raise(NULL, MPI_ERR_ARG, fn);
    if (t->nints)
        memcpy(array_of_integers, t->ints, (size_t)t->nints * sizeof(int));
    if (t->naddrs)
        memcpy(array_of_addresses, t->addrs, (size_t)t->naddrs * sizeof(MPI_Aint));
    for (int i = 0; i < t->ntypes; i++) {
        array_of_datatypes[i] = t->types[i];
        dt_retain(t->types[i]);
    }
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    int rc = check(datatype, type_name);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_set_name");
    size_t n = strlen(type_name);
    n = n < MPI_MAX_OBJECT_NAME - 1 ? n : MPI_MAX_OBJECT_NAME - 1;
    memcpy(datatype->name, type_name, n);
    datatype->name[n] = 0;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    int rc = check(datatype, type_name && resultlen ? type_name : NULL);
    if (rc)
        return err_raise(NULL, rc, "MPI_Type_get_name");
    size_t n = strlen(datatype->name);
    memcpy(type_name, datatype->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Address(void *location, MPI_Aint *address)
{
    if (!address)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Task context. Through unsigned arithmetic: addresses may wrap as signed numbers. */
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

/* Task context. */
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* --- packing ----------------------------------------------------------------------------- */

/* The packed form is the native one (the library runs between like machines): the data
 * bytes in typemap order, as dt_pack writes them. */

/* Task context. */
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    static const char fn[] = "MPI_Pack";
    int rc = comm == MPI_COMM_NULL ? MPI_ERR_COMM
             : incount < 0         ? MPI_ERR_COUNT
                                   : dt_check(datatype);
    if (!rc && (!position || *position < 0 || outsize < 0))
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(comm, rc, fn);
    size_t bytes = (size_t)incount * datatype->size;
    if (bytes > (size_t)outsize - (size_t)*position || *position > outsize)
        return err_raise(comm, MPI_ERR_TRUNCATE, fn);
    if (bytes && !outbuf)
        return err_raise(comm, MPI_ERR_ARG, fn);
    if (bytes)
        dt_pack(inbuf, incount, datatype, (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Unpack";
    int rc = comm == MPI_COMM_NULL ? MPI_ERR_COMM
             : outcount < 0        ? MPI_ERR_COUNT
                                   : dt_check(datatype);
    if (!rc && (!position || *position < 0 || insize < 0))
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(comm, rc, fn);
    size_t bytes = (size_t)outcount * datatype->size;
    if (*position > insize || bytes > (size_t)insize - (size_t)*position)
        return err_raise(comm, MPI_ERR_TRUNCATE, fn);
    if (bytes && !inbuf)
        return err_raise(comm, MPI_ERR_ARG, fn);
    if (bytes)
        dt_unpack((const char *)inbuf + *position, bytes, outbuf, outcount, datatype);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Pack_size";
    int rc = comm == MPI_COMM_NULL ? MPI_ERR_COMM
             : incount < 0         ? MPI_ERR_COUNT
                                   : dt_check(datatype);
    if (!rc && !size)
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(comm, rc, fn);
    size_t bytes = (size_t)incount * datatype->size;
    if (bytes > INT_MAX)
        return err_raise(comm, MPI_ERR_ARG, fn);
    *size = (int)bytes;
    return MPI_SUCCESS;
}
