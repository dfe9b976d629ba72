# Tools every part of the build needs: compilers, QEMU under TCG, initrd packing,
# `apt-get source` (dpkg-dev), static checks, the host fuzzing runtime, and gfortran (the
# Fortran bindings' module and the Fortran programs of the Linux home: mpi/fortran/).
PKGS+=(build-essential gcc make binutils dpkg-dev qemu-system-x86 cpio xz-utils
    clang clang-format libclang-rt-14-dev python3 iproute2 util-linux gfortran)
