# The Open MPI baseline of the MPI benchmarks runs in Debian Linux guests: their root
# filesystem is built by tests/bench/ompi/build-guest.sh with debootstrap (Debian packages
# from the archive apt already uses), into the cache.
PKGS+=(debootstrap cpio)
