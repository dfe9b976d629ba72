#!/usr/bin/env bash
# tests/bench/impi_relay_cpu.bench.sh: impi-relay's CPU cost per packet, as instructions
# counted by valgrind's callgrind (deterministic where a CPU time on a shared 2-core machine
# is not), against the direct path measured in the same run. Prints rows "figure value
# baseline unit ratio" (tests/bench/run.sh's format); figures only, never pass or fail.
#
# Two scripted IMPI hosts (tests/interop/impi_fake_client.py, mode pingpong: the real
# startup, dance, 0-byte DATA packets and FINI) on the topology of tests/bench/impi.bench.sh
# (tests/bench/impi_topo.sh), 1 proc per client:
#   - relay: client A behind one impi-relay, which runs under callgrind; its instructions
#     over the whole job divided by the packets it forwarded (its own counters, printed at
#     exit): the per-packet work plus its start-up spread over PP_ITERS round trips;
#   - baseline, direct: both clients on the global network, where impi-server is the only
#     process of the path besides the two hosts; its instructions (start-up only: packets
#     go host to host) divided by the same number of packets.
# Callgrind counts the process's own instructions, not the kernel's work in its system
# calls: a regression of the relay's code (or an extra system call's libc wrapper) shows as
# a larger first figure, a slower kernel path does not. The count varies by well under 1%
# between runs (more or fewer event-loop wake-ups).
# Needs root and valgrind; LAM only for the shared set-up (impi_setup). PP_ITERS (default
# 5000) round trips per job: a few seconds on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/interop/impi_lib.sh
. tests/bench/impi_topo.sh
PP_ITERS=${PP_ITERS:-5000}

row() { # name value baseline unit baseline-name (the format of tests/bench/run.sh)
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b ~ /^[0-9.]+$/ && b > 0 && v ~ /^-?[0-9.]+$/ ? sprintf("%.2f", v / b) : "-"), bn }'
}

if ! valgrind --version >/dev/null 2>&1; then
    echo "# impi_relay_cpu: skipped: no valgrind (Debian package valgrind)"
    exit 0
fi
impi_setup
bench_topology
mkdir -p "$WORK/cg"

# cg_wrap NAME BINARY: a command that runs BINARY under callgrind, its profile in
# $WORK/cg/NAME (written when the daemon exits by itself at the end of the job).
cg_wrap() {
    printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s %s "$@"\n' \
        "$WORK/cg/$1" "$2" >"$WORK/cg/$1.sh"
    chmod 755 "$WORK/cg/$1.sh"
    echo "$WORK/cg/$1.sh"
}
# Instructions executed in profile $1 (callgrind's "summary:" line), or empty.
cg_instr() { sed -n 's/^summary: \([0-9]*\).*/\1/p' "$1" 2>/dev/null; }

server=$SERVER_BIN relay=$RELAY_BIN
RELAY_BIN=$(cg_wrap relay "$relay")
bench_job relaycpu-relay 1 relay direct fake "pingpong:$PP_ITERS"
RELAY_BIN=$relay SERVER_BIN=$(cg_wrap server "$server")
bench_job relaycpu-direct 1 direct direct fake "pingpong:$PP_ITERS"
SERVER_BIN=$server

# The relay's own counters: packets both ways (FINI and PROTOACK per hop included).
pkts=$(sed -n 's/.*forwarded private->global \([0-9]*\) packets [0-9]* bytes, global->private \([0-9]*\) packets.*/\1 \2/p' \
    "$WORK/log/relaycpu-relay-rA.log.out" | awk '{ print $1 + $2 }')
ri=$(cg_instr "$WORK/cg/relay") si=$(cg_instr "$WORK/cg/server")
if [ -z "${pkts:-}" ] || [ "$pkts" = 0 ] || [ -z "$ri" ] || [ -z "$si" ]; then
    echo "# impi_relay_cpu: no relay counters or no profile; relay said:"
    tail -n 3 "$WORK/log/relaycpu-relay-rA.log" | sed 's/^/#   /'
    exit 0
fi
echo "# impi_relay_cpu: $PP_ITERS round trips; impi-relay forwarded $pkts packets in $ri instructions; impi-server (direct) $si instructions"
row "impi: relay instr/packet (0 B pp)" "$((ri / pkts))" "$((si / pkts))" instr \
    "impi-server of the direct path, per packet of the same job"
exit 0
