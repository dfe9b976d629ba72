/*
 * mpi.h: the MPI interface of the unikernel's MPI library (MPI-3.1 C bindings).
 *
 * Handles are pointers to the library's objects; the predefined ones (MPI_INT, MPI_SUM,
 * MPI_COMM_WORLD, ...) are addresses of library globals and the null handles are (T)0,
 * so handles compare with == and can be used in constant initialisers.
 *
 * Everything declared here links. Functions the library does not implement yet
 * (mpi/lib/unimpl.c) print "MPI_X is not implemented" and abort the job when called.
 * The profiling interface (PMPI_) is not provided. The Fortran bindings (mpif.h, the mpi
 * module: mpi/fortran/) build for the Linux home only.
 */
#ifndef MPI_H
#define MPI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION    3
#define MPI_SUBVERSION 1

/* --- handle and scalar types ------------------------------------------------------- */

typedef struct mpi_comm_s *MPI_Comm;
typedef struct mpi_dtype_s *MPI_Datatype;
typedef struct mpi_op_s *MPI_Op;
typedef struct mpi_group_s *MPI_Group;
typedef struct mpi_req_s *MPI_Request;
typedef struct mpi_errhandler_s *MPI_Errhandler;
typedef struct mpi_message_s *MPI_Message;
typedef struct mpi_win_s *MPI_Win;
typedef struct mpi_info_s *MPI_Info;

typedef intptr_t MPI_Aint;
typedef long long MPI_Count;
typedef long long MPI_Offset;
typedef int MPI_Fint;

/* mpi_count_: bytes received (filled by point-to-point); MPI_Get_count and
 * MPI_Get_elements turn it into elements of a datatype. */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int mpi_cancelled_;
    size_t mpi_count_;
} MPI_Status;

#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

/* --- null and predefined handles --------------------------------------------------- */

#define MPI_COMM_NULL       ((MPI_Comm)0)
#define MPI_DATATYPE_NULL   ((MPI_Datatype)0)
#define MPI_OP_NULL         ((MPI_Op)0)
#define MPI_GROUP_NULL      ((MPI_Group)0)
#define MPI_REQUEST_NULL    ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_MESSAGE_NULL    ((MPI_Message)0)
#define MPI_WIN_NULL        ((MPI_Win)0)
#define MPI_INFO_NULL       ((MPI_Info)0)

extern struct mpi_comm_s mpi_comm_world_, mpi_comm_self_;
#define MPI_COMM_WORLD (&mpi_comm_world_)
#define MPI_COMM_SELF  (&mpi_comm_self_)

/* The info object of the start-up environment (MPI-3.1 9.1.1); it holds no keys. */
extern struct mpi_info_s mpi_info_env_;
#define MPI_INFO_ENV (&mpi_info_env_)

extern struct mpi_group_s mpi_group_empty_;
#define MPI_GROUP_EMPTY (&mpi_group_empty_)

/* The message MPI_Mprobe returns for MPI_PROC_NULL: a sentinel, never dereferenced. */
#define MPI_MESSAGE_NO_PROC ((MPI_Message)1)

extern struct mpi_errhandler_s mpi_errors_are_fatal_, mpi_errors_return_;
#define MPI_ERRORS_ARE_FATAL (&mpi_errors_are_fatal_)
#define MPI_ERRORS_RETURN    (&mpi_errors_return_)

/* Basic datatypes. */
extern struct mpi_dtype_s mpi_dt_char_, mpi_dt_signed_char_, mpi_dt_unsigned_char_, mpi_dt_byte_,
    mpi_dt_short_, mpi_dt_unsigned_short_, mpi_dt_int_, mpi_dt_unsigned_, mpi_dt_long_,
    mpi_dt_unsigned_long_, mpi_dt_long_long_, mpi_dt_unsigned_long_long_, mpi_dt_float_,
    mpi_dt_double_, mpi_dt_long_double_, mpi_dt_wchar_, mpi_dt_c_bool_, mpi_dt_int8_, mpi_dt_int16_,
    mpi_dt_int32_, mpi_dt_int64_, mpi_dt_uint8_, mpi_dt_uint16_, mpi_dt_uint32_, mpi_dt_uint64_,
    mpi_dt_aint_, mpi_dt_count_, mpi_dt_offset_, mpi_dt_c_float_complex_, mpi_dt_c_double_complex_,
    mpi_dt_c_long_double_complex_, mpi_dt_packed_;
/* The value-index pairs of MPI_MINLOC and MPI_MAXLOC (C struct layout). */
extern struct mpi_dtype_s mpi_dt_float_int_, mpi_dt_double_int_, mpi_dt_long_int_, mpi_dt_2int_,
    mpi_dt_short_int_, mpi_dt_long_double_int_;

#define MPI_CHAR                  (&mpi_dt_char_)
#define MPI_SIGNED_CHAR           (&mpi_dt_signed_char_)
#define MPI_UNSIGNED_CHAR         (&mpi_dt_unsigned_char_)
#define MPI_BYTE                  (&mpi_dt_byte_)
#define MPI_SHORT                 (&mpi_dt_short_)
#define MPI_UNSIGNED_SHORT        (&mpi_dt_unsigned_short_)
#define MPI_INT                   (&mpi_dt_int_)
#define MPI_UNSIGNED              (&mpi_dt_unsigned_)
#define MPI_LONG                  (&mpi_dt_long_)
#define MPI_UNSIGNED_LONG         (&mpi_dt_unsigned_long_)
#define MPI_LONG_LONG_INT         (&mpi_dt_long_long_)
#define MPI_LONG_LONG             MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG    (&mpi_dt_unsigned_long_long_)
#define MPI_FLOAT                 (&mpi_dt_float_)
#define MPI_DOUBLE                (&mpi_dt_double_)
#define MPI_LONG_DOUBLE           (&mpi_dt_long_double_)
#define MPI_WCHAR                 (&mpi_dt_wchar_)
#define MPI_C_BOOL                (&mpi_dt_c_bool_)
#define MPI_INT8_T                (&mpi_dt_int8_)
#define MPI_INT16_T               (&mpi_dt_int16_)
#define MPI_INT32_T               (&mpi_dt_int32_)
#define MPI_INT64_T               (&mpi_dt_int64_)
#define MPI_UINT8_T               (&mpi_dt_uint8_)
#define MPI_UINT16_T              (&mpi_dt_uint16_)
#define MPI_UINT32_T              (&mpi_dt_uint32_)
#define MPI_UINT64_T              (&mpi_dt_uint64_)
#define MPI_AINT                  (&mpi_dt_aint_)
#define MPI_COUNT                 (&mpi_dt_count_)
#define MPI_OFFSET                (&mpi_dt_offset_)
#define MPI_C_FLOAT_COMPLEX       (&mpi_dt_c_float_complex_)
#define MPI_C_COMPLEX             MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX      (&mpi_dt_c_double_complex_)
#define MPI_C_LONG_DOUBLE_COMPLEX (&mpi_dt_c_long_double_complex_)
#define MPI_PACKED                (&mpi_dt_packed_)
#define MPI_FLOAT_INT             (&mpi_dt_float_int_)
#define MPI_DOUBLE_INT            (&mpi_dt_double_int_)
#define MPI_LONG_INT              (&mpi_dt_long_int_)
#define MPI_2INT                  (&mpi_dt_2int_)
#define MPI_SHORT_INT             (&mpi_dt_short_int_)
#define MPI_LONG_DOUBLE_INT       (&mpi_dt_long_double_int_)

extern struct mpi_op_s mpi_op_max_, mpi_op_min_, mpi_op_sum_, mpi_op_prod_, mpi_op_land_,
    mpi_op_band_, mpi_op_lor_, mpi_op_bor_, mpi_op_lxor_, mpi_op_bxor_, mpi_op_minloc_,
    mpi_op_maxloc_, mpi_op_replace_, mpi_op_no_op_;
#define MPI_MAX     (&mpi_op_max_)
#define MPI_MIN     (&mpi_op_min_)
#define MPI_SUM     (&mpi_op_sum_)
#define MPI_PROD    (&mpi_op_prod_)
#define MPI_LAND    (&mpi_op_land_)
#define MPI_BAND    (&mpi_op_band_)
#define MPI_LOR     (&mpi_op_lor_)
#define MPI_BOR     (&mpi_op_bor_)
#define MPI_LXOR    (&mpi_op_lxor_)
#define MPI_BXOR    (&mpi_op_bxor_)
#define MPI_MINLOC  (&mpi_op_minloc_)
#define MPI_MAXLOC  (&mpi_op_maxloc_)
#define MPI_REPLACE (&mpi_op_replace_)
#define MPI_NO_OP   (&mpi_op_no_op_)

/* --- constants --------------------------------------------------------------------- */

/* Distinct negative values: none of them is a rank, a tag or a count. ANY_SOURCE and
 * ANY_TAG equal the matching engine's wildcards (mpi/core/match.h). */
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG    (-2)
#define MPI_PROC_NULL  (-3)
#define MPI_ROOT       (-4)
#define MPI_UNDEFINED  (-32766)

#define MPI_IN_PLACE ((void *)1)
#define MPI_BOTTOM   ((void *)0)

#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           256
#define MPI_MAX_OBJECT_NAME            64
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PORT_NAME              1024
#define MPI_BSEND_OVERHEAD             96

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Results of MPI_Comm_compare and MPI_Group_compare. */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* Predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD) and keyval sentinel. */
#define MPI_KEYVAL_INVALID    (-1)
#define MPI_TAG_UB            1
#define MPI_HOST              2
#define MPI_IO                3
#define MPI_WTIME_IS_GLOBAL   4
#define MPI_APPNUM            5
#define MPI_UNIVERSE_SIZE     6
#define MPI_LASTUSEDCODE      7
#define MPI_WIN_BASE          8
#define MPI_WIN_SIZE          9
#define MPI_WIN_DISP_UNIT     10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL         12

/* Topologies. */
#define MPI_GRAPH         1
#define MPI_CART          2
#define MPI_DIST_GRAPH    3
#define MPI_UNWEIGHTED    ((int *)2)
#define MPI_WEIGHTS_EMPTY ((int *)3)

#define MPI_COMM_TYPE_SHARED 1

/* MPI_Type_create_subarray / darray. */
#define MPI_ORDER_C              0
#define MPI_ORDER_FORTRAN        1
#define MPI_DISTRIBUTE_BLOCK     0
#define MPI_DISTRIBUTE_CYCLIC    1
#define MPI_DISTRIBUTE_NONE      2
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* MPI_Type_get_envelope combiners. */
#define MPI_COMBINER_NAMED            0
#define MPI_COMBINER_DUP              1
#define MPI_COMBINER_CONTIGUOUS       2
#define MPI_COMBINER_VECTOR           3
#define MPI_COMBINER_HVECTOR_INTEGER  4
#define MPI_COMBINER_HVECTOR          5
#define MPI_COMBINER_INDEXED          6
#define MPI_COMBINER_HINDEXED_INTEGER 7
#define MPI_COMBINER_HINDEXED         8
#define MPI_COMBINER_INDEXED_BLOCK    9
#define MPI_COMBINER_HINDEXED_BLOCK   10
#define MPI_COMBINER_STRUCT_INTEGER   11
#define MPI_COMBINER_STRUCT           12
#define MPI_COMBINER_SUBARRAY         13
#define MPI_COMBINER_DARRAY           14
#define MPI_COMBINER_F90_REAL         15
#define MPI_COMBINER_F90_COMPLEX      16
#define MPI_COMBINER_F90_INTEGER      17
#define MPI_COMBINER_RESIZED          18

/* One-sided communication. */
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED    2
#define MPI_MODE_NOCHECK   1
#define MPI_MODE_NOSTORE   2
#define MPI_MODE_NOPUT     4
#define MPI_MODE_NOPRECEDE 8
#define MPI_MODE_NOSUCCEED 16

/* Error classes (also the error codes: the library has no other codes). */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_IN_STATUS             18
#define MPI_ERR_PENDING               19
#define MPI_ERR_KEYVAL                20
#define MPI_ERR_NO_MEM                21
#define MPI_ERR_BASE                  22
#define MPI_ERR_INFO_KEY              23
#define MPI_ERR_INFO_VALUE            24
#define MPI_ERR_INFO_NOKEY            25
#define MPI_ERR_SPAWN                 26
#define MPI_ERR_PORT                  27
#define MPI_ERR_SERVICE               28
#define MPI_ERR_NAME                  29
#define MPI_ERR_WIN                   30
#define MPI_ERR_SIZE                  31
#define MPI_ERR_DISP                  32
#define MPI_ERR_INFO                  33
#define MPI_ERR_LOCKTYPE              34
#define MPI_ERR_ASSERT                35
#define MPI_ERR_RMA_CONFLICT          36
#define MPI_ERR_RMA_SYNC              37
#define MPI_ERR_RMA_RANGE             38
#define MPI_ERR_RMA_ATTACH            39
#define MPI_ERR_RMA_SHARED            40
#define MPI_ERR_RMA_FLAVOR            41
#define MPI_ERR_FILE                  42
#define MPI_ERR_NOT_SAME              43
#define MPI_ERR_AMODE                 44
#define MPI_ERR_UNSUPPORTED_DATAREP   45
#define MPI_ERR_UNSUPPORTED_OPERATION 46
#define MPI_ERR_NO_SUCH_FILE          47
#define MPI_ERR_FILE_EXISTS           48
#define MPI_ERR_BAD_FILE              49
#define MPI_ERR_ACCESS                50
#define MPI_ERR_NO_SPACE              51
#define MPI_ERR_QUOTA                 52
#define MPI_ERR_READ_ONLY             53
#define MPI_ERR_FILE_IN_USE           54
#define MPI_ERR_DUP_DATAREP           55
#define MPI_ERR_CONVERSION            56
#define MPI_ERR_IO                    57
/* Not in MPI-3.1: a process the operation needed failed, or the connection to its node
 * did (the name and meaning of the fault-tolerance proposal's class). */
#define MPIX_ERR_PROC_FAILED          58
#define MPI_ERR_LASTCODE              59

/* --- callback types ---------------------------------------------------------------- */

typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn; /* MPI-2 name */
typedef MPI_Comm_errhandler_function MPI_Handler_function;   /* MPI-1 name */
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);

typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);

/* The predefined attribute callbacks (mpi/lib/misc.c). */
int mpi_comm_null_copy_fn_(MPI_Comm, int, void *, void *, void *, int *);
int mpi_comm_dup_fn_(MPI_Comm, int, void *, void *, void *, int *);
int mpi_comm_null_delete_fn_(MPI_Comm, int, void *, void *);
#define MPI_COMM_NULL_COPY_FN   mpi_comm_null_copy_fn_
#define MPI_COMM_DUP_FN         mpi_comm_dup_fn_
#define MPI_COMM_NULL_DELETE_FN mpi_comm_null_delete_fn_
#define MPI_NULL_COPY_FN        mpi_comm_null_copy_fn_
#define MPI_DUP_FN              mpi_comm_dup_fn_
#define MPI_NULL_DELETE_FN      mpi_comm_null_delete_fn_
int mpi_type_null_copy_fn_(MPI_Datatype, int, void *, void *, void *, int *);
int mpi_type_dup_fn_(MPI_Datatype, int, void *, void *, void *, int *);
int mpi_type_null_delete_fn_(MPI_Datatype, int, void *, void *);
#define MPI_TYPE_NULL_COPY_FN   mpi_type_null_copy_fn_
#define MPI_TYPE_DUP_FN         mpi_type_dup_fn_
#define MPI_TYPE_NULL_DELETE_FN mpi_type_null_delete_fn_

/* --- environment ------------------------------------------------------------------- */

int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
int MPI_Get_processor_name(char *name, int *resultlen);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Pcontrol(const int level, ...);

/* Fortran handles and statuses (MPI-3.1 17.2.4): the integers of the Fortran bindings
 * (mpi/fortran/). A handle gets its integer on its first conversion. */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);

/* --- errors ------------------------------------------------------------------------ */

int MPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Error_class(int errorcode, int *errorclass);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Errhandler_free(MPI_Errhandler *errhandler);
/* MPI-1 names, removed from MPI-3 but still common in older programs. */
int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler);
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Add_error_class(int *errorclass);
int MPI_Add_error_code(int errorclass, int *errorcode);
int MPI_Add_error_string(int errorcode, const char *string);

/* --- point-to-point ---------------------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request array_of_requests[]);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[]);
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status);
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request);
int MPI_Cancel(MPI_Request *request);
int MPI_Request_free(MPI_Request *request);
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);

/* --- status ------------------------------------------------------------------------ */

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);

/* --- datatypes --------------------------------------------------------------------- */

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype);
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                    MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_commit(MPI_Datatype *datatype);
int MPI_Type_free(MPI_Datatype *datatype);
int MPI_Type_size(MPI_Datatype datatype, int *size);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent);
/* MPI-1 extent queries, removed from MPI-3 but still common in older programs. */
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent);
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]);
int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                           void *extra_state);
int MPI_Type_free_keyval(int *type_keyval);
int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val);
int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag);
int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);
int MPI_Get_address(const void *location, MPI_Aint *address);
int MPI_Address(void *location, MPI_Aint *address);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm);
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);

/* --- reductions -------------------------------------------------------------------- */

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op);

/* --- groups ------------------------------------------------------------------------ */

int MPI_Group_size(MPI_Group group, int *size);
int MPI_Group_rank(MPI_Group group, int *rank);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_free(MPI_Group *group);

/* --- communicators and attributes -------------------------------------------------- */

int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
int MPI_Comm_remote_size(MPI_Comm comm, int *size);
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm);
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state);
int MPI_Comm_free_keyval(int *comm_keyval);
/* MPI-1 attribute names. */
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Attr_delete(MPI_Comm comm, int keyval);
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state);
int MPI_Keyval_free(int *keyval);

/* --- info -------------------------------------------------------------------------- */

int MPI_Info_create(MPI_Info *info);
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int MPI_Info_free(MPI_Info *info);
int MPI_Info_set(MPI_Info info, const char *key, const char *value);
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
int MPI_Info_delete(MPI_Info info, const char *key);
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);
/* MPI-4.0 */
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag);
int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info);

/* --- collectives ------------------------------------------------------------------- */

int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm);

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request);
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request);
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request);
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request);
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request);
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request);

/* MPI-4's persistent collectives: built once, each MPI_Start runs the same graph. */
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request);
int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request);
int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request);
int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request);
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request);
int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request);
int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request);
int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request);

/* --- process topologies ------------------------------------------------------------ */

int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int MPI_Topo_test(MPI_Comm comm, int *status);
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph);
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank);
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted);
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]);
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);

/* --- one-sided communication ------------------------------------------------------- */

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win);
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win);
int MPI_Win_free(MPI_Win *win);
int MPI_Win_fence(int assert, MPI_Win win);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);
int MPI_Win_flush(int rank, MPI_Win win);
int MPI_Win_flush_all(MPI_Win win);
int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win);
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win);
int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win);

#ifdef __cplusplus
}
#endif
#endif
