# The MPI library's Linux home (docs/architecture.md §3.10, §3.15): mpi/lib, mpi/core
# and mpi/cad, unchanged, with the Linux platform of mpi/linux/ (mlx.h), built by the
# host's gcc into $(B)/linux/libukmpi.a. `mpi/bin/ukmpicc --linux` links programs with it;
# `mpi/bin/ukmpirun` runs them as the nodes of a job on this host.
MLX_SRCS := $(wildcard mpi/linux/*.c) $(MPI_CORE_SRCS) $(MPI_LIB_SRCS) $(IMPI_CODEC)
MLX_OBJS := $(patsubst %.c,$(B)/linux/obj/%.o,$(MLX_SRCS))
MLX_LIB := $(B)/linux/libukmpi.a
MLX_INC := -Impi/linux -Impi/impi -Ihost-kmod/o2g -Ihost-kmod/kacc $(MPI_LIB_INC)

$(B)/linux/obj/%.o: %.c $(wildcard mpi/linux/*.h host-kmod/o2g/o2g_uapi.h host-kmod/kacc/kacc_uapi.h mpi/lib/*.h mpi/include/*.h mpi/core/*.h \
                                   mpi/cad/*.h mpi/fortran/*.h) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -pthread $(MLX_INC) -c $< -o $@

$(MLX_LIB): $(MLX_OBJS)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(MLX_LIB)
