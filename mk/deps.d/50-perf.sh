# perf (Debian's linux-perf): the optional relay profile of tests/bench/uk_impi.bench.sh
# (PERF=1 or PERF=record).
PKGS+=(linux-perf)
