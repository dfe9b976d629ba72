#!/usr/bin/env bash
# uk-with-lam.sh: runs a unikernel MPI job and a LAM/MPI 7.1.4 job as one MPI_COMM_WORLD
# through impi-server (issue 13), the entry point of the unikernel interop tests that users
# can run with their own programs:
#
#   tests/interop/uk-with-lam.sh [--relay [--uk-clusters C]] [--uk-nodes N] [--timeout S] [-v]
#                                UK_IMAGE LAM_SOURCE.c [ARGS...]
#
#   UK_IMAGE      the program built with mpi/bin/ukmpicc: IMPI client 0, N nodes x 2 ranks
#                 (world ranks 0..2N-1)
#   LAM_SOURCE.c  the program for LAM, built here with LAM's mpicc: client 1, 2 procs (the
#                 last 2 world ranks); usually the same source as UK_IMAGE
#   ARGS          given to both programs
#   --uk-nodes N  unikernel nodes (1..8, default 1); node I is 10.0.0.(I+1)
#   --timeout S   safety net only (default 600, or UK_LAM_TIMEOUT): a side still running
#                 after S seconds is stopped and counts as hung
#   --relay       the unikernel behind impi-relay (the seed's topology, below)
#   --uk-clusters C  (with --relay) C unikernel jobs (1..4, default 1), each on its own
#                 private hub behind its own relay, IMPI clients 0..C-1; LAM is client C
#   -v            the unikernel's whole console (qemu/ukrun -v), not only rank output and
#                 the lines that say why a job ended
#   UK_LAM_RELAY_PREFIX (environment, --relay) words run before impi-relay's command, e.g.
#                 "perf stat -o FILE --" (tests/bench/uk_impi.bench.sh, PERF=1)
#
# Direct topology: a network namespace of this run's own with a TAP device 10.0.0.254/24
# that the unikernel job's hub joins (qemu/ukrun --hub-tap, --hub-netns); impi-server
# -server 2 listens on 10.0.0.254, LAM (an unprivileged user, its own session,
# IMPI_AUTH_NONE, advertising 10.0.0.254) runs in the namespace.
# --relay: the TAP (10.0.0.254) is in a front-end namespace, whose other leg (10.77.2.101)
# is a veth into a global namespace (a bridge at 10.77.2.2) with impi-server and LAM;
# impi-relay runs on the front-end (-private 10.0.0.254 -global 10.77.2.101) and is the
# unikernel's IMPI server. The unikernel cannot reach the global namespace: everything
# crosses the relay. Cluster c of --uk-clusters has front-end c (global 10.77.2.(100+c)).
# Nothing here touches the host's network.
# Output: every line of the unikernel side prefixed "[uk] ", of LAM's "[lam] ", then
# "uk-with-lam: ..." lines saying how each side ended, with what impi-server and impi-relay
# printed after their address (the relay's packet counters), prefixed "[impi-relay] " etc.
# Exit: 0 if both sides, the server (and the relay) exited 0; 1 if one failed or hung (a
# side that fails first gets the other stopped after a grace period, so a failure never
# waits for the safety net); 2 on a usage mistake.
# LAM's mpirun exits 0 once its procs called MPI_Finalize, whatever their exit codes (seen
# with -sa too): a program reports its LAM procs' failures through a unikernel rank (as
# uk_lam_prog.c does: rank 0 collects every rank's result and exits 1).
# Needs root (namespace, TAP, the LAM user), as tests/interop/run.sh. Everything it makes
# (namespace, TAP, LAM session, processes, work directory) goes on every exit path.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$ d' | sed 's/^# \{0,1\}//'; }
relay=0 uk_nodes=1 uk_clusters=1 timeout=${UK_LAM_TIMEOUT:-600} ukrun_opts=()
while [ $# -gt 0 ]; do
    case $1 in
    --relay) relay=1; shift ;;
    -v) ukrun_opts+=(-v); shift ;;
    --uk-nodes) uk_nodes=${2-}; shift 2 || { echo "uk-with-lam: --uk-nodes needs N" >&2; exit 2; } ;;
    --uk-clusters) uk_clusters=${2-}; shift 2 || { echo "uk-with-lam: --uk-clusters needs C" >&2; exit 2; } ;;
    --timeout) timeout=${2-}; shift 2 || { echo "uk-with-lam: --timeout needs S" >&2; exit 2; } ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "uk-with-lam: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "uk-with-lam: need UK_IMAGE and LAM_SOURCE.c (see --help)" >&2; exit 2; }
uk_image=$(readlink -f "$1") lam_src=$(readlink -f "$2")
shift 2
[ -f "$uk_image" ] || { echo "uk-with-lam: $uk_image: no such file" >&2; exit 2; }
[ -f "$lam_src" ] || { echo "uk-with-lam: $lam_src: no such file" >&2; exit 2; }
[[ $uk_nodes =~ ^[1-8]$ ]] || { echo "uk-with-lam: --uk-nodes $uk_nodes: must be 1..8" >&2; exit 2; }
[[ $uk_clusters =~ ^[1-4]$ ]] || { echo "uk-with-lam: --uk-clusters $uk_clusters: must be 1..4" >&2; exit 2; }
[ "$uk_clusters" = 1 ] || [ "$relay" = 1 ] || { echo "uk-with-lam: --uk-clusters needs --relay" >&2; exit 2; }
[[ $timeout =~ ^[1-9][0-9]*$ ]] || { echo "uk-with-lam: --timeout $timeout: whole seconds > 0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "uk-with-lam: needs root (network namespace, TAP, LAM user)" >&2; exit 2; }

# impi_lib.sh: the LAM user, sessions, namespaces, daemons; its safety net is ours.
LAM_TIMEOUT=$timeout
# shellcheck source=tests/interop/impi_lib.sh
. "$here/impi_lib.sh"
[ -x "$SERVER_BIN" ] || { echo "uk-with-lam: $SERVER_BIN not built (make all)" >&2; exit 2; }
[ "$relay" = 0 ] || [ -x "$RELAY_BIN" ] || { echo "uk-with-lam: $RELAY_BIN not built (make all)" >&2; exit 2; }

readonly TAP_ADDR=10.0.0.254 TAP_PREFIX=24 TAP_IF=uktap0 LAM_PROCS=2 UK_RANKS_PER_NODE=2
readonly GLOBAL_NET=10.77.2 GLOBAL_HOST=10.77.2.2 GLOBAL_PREFIX=24 # --relay only
SIDES=(uk)
for c in $(seq 2 "$uk_clusters"); do SIDES+=("uk$c"); done
SIDES+=(lam)
SIDES_NAME=uk-with-lam
# shellcheck source=tests/interop/sides_lib.sh
. "$here/sides_lib.sh"

# EXIT trap: the sides, then what impi_lib.sh made (server, LAM session, namespace, WORK).
uwl_cleanup() {
    sides_stop_all
    impi_cleanup
}

impi_setup
trap uwl_cleanup EXIT

# LAM's mpicc: as root (impi_build_prog says why), into the LAM user's TMPDIR.
lam_prog=$WORK/tmp/$(basename "${lam_src%.c}")
"$LAM_CACHED/bin/mpicc" -O2 -o "$lam_prog" "$lam_src" 2>&1 | sed 's/^/[lam mpicc] /'
[ "${PIPESTATUS[0]}" = 0 ] || { echo "uk-with-lam: LAM's mpicc failed on $lam_src"; exit 1; }
chmod 755 "$lam_prog"

# The start-up limits (-timeout) of server and relay cover the unikernel's boot under TCG;
# the job's own lifetime is not limited by them (they stop the clock at DONE).
hub_nss=() uk_srvs=() # per unikernel cluster: the namespace of its hub, its IMPI server
if [ "$relay" = 0 ]; then
    lam_ns=${NSP}uk lam_addr=$TAP_ADDR
    sides_tap_ns "$lam_ns" "$TAP_IF" "$TAP_ADDR/$TAP_PREFIX"
    sides_daemon impi-server "$lam_ns" "$WORK/log/impi-server.log" "$SERVER_BIN" -server 2 \
        -host "$lam_addr" -timeout "$timeout" -v
    srv=$(head -n1 "$WORK/log/impi-server.log.out")
    hub_nss=("$lam_ns") uk_srvs=("$srv")
    echo "uk-with-lam: impi-server at $srv in namespace $lam_ns"
else
    lam_ns=${NSP}G lam_addr=$GLOBAL_HOST
    mkns "$lam_ns"
    { ip -n "$lam_ns" link add br0 type bridge &&
        ip -n "$lam_ns" addr add "$GLOBAL_HOST/$GLOBAL_PREFIX" dev br0 &&
        ip -n "$lam_ns" link set br0 up; } || { echo "uk-with-lam: cannot make the global bridge"; exit 1; }
    sides_daemon impi-server "$lam_ns" "$WORK/log/impi-server.log" "$SERVER_BIN" \
        -server $((uk_clusters + 1)) -host "$lam_addr" -timeout "$timeout" -v
    srv=$(head -n1 "$WORK/log/impi-server.log.out")
    echo "uk-with-lam: impi-server at $srv in namespace $lam_ns"
    read -ra relay_prefix <<<"${UK_LAM_RELAY_PREFIX:-}"
    for c in $(seq 1 "$uk_clusters"); do
        ns=${NSP}F$c front=$GLOBAL_NET.$((100 + c)) name=impi-relay
        [ "$c" = 1 ] || name=impi-relay$c
        sides_tap_ns "$ns" "$TAP_IF" "$TAP_ADDR/$TAP_PREFIX"
        { ip link add glob netns "$ns" type veth peer name "f$c" netns "$lam_ns" &&
            ip -n "$ns" addr add "$front/$GLOBAL_PREFIX" dev glob &&
            ip -n "$ns" link set glob up && ip -n "$lam_ns" link set "f$c" master br0 up; } ||
            { echo "uk-with-lam: cannot link front-end $c to the global bridge"; exit 1; }
        sides_daemon "$name" "$ns" "$WORK/log/$name.log" "${relay_prefix[@]}" "$RELAY_BIN" -private "$TAP_ADDR" \
            -global "$front" -server "$srv" -timeout "$timeout" -v
        hub_nss+=("$ns") uk_srvs+=("$(head -n1 "$WORK/log/$name.log.out")")
        echo "uk-with-lam: $name at ${uk_srvs[-1]} (private), $front (global) in namespace $ns"
    done
fi
echo "uk-with-lam: unikernel nodes 10.0.0.1..10.0.0.$uk_nodes (hub in namespace ${hub_nss[*]}); LAM at $lam_addr in namespace $lam_ns"

lam_boot L "$lam_ns"

for c in $(seq 1 "$uk_clusters"); do
    side=uk
    [ "$c" = 1 ] || side=uk$c
    sides_launch "$side" "$root/qemu/ukrun" "${ukrun_opts[@]}" -n $((UK_RANKS_PER_NODE * uk_nodes)) \
        --nodes "$uk_nodes" --timeout "$timeout" --impi-server "${uk_srvs[$((c - 1))]}" \
        --impi-client $((c - 1)) --hub-tap "$TAP_IF" --hub-netns "${hub_nss[$((c - 1))]}" \
        "$uk_image" "$@"
done
sides_launch lam ip netns exec "$lam_ns" timeout "$timeout" setpriv --reuid="$TUSER" --regid="$TUSER" \
    --init-groups env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" \
    LAMHOME="$LAM" LAM_MPI_SESSION_PREFIX="$WORK/sess" LAM_MPI_SESSION_SUFFIX=L IMPI_AUTH_NONE= \
    IMPI_HOST_NAME="$lam_addr" LAM_IMPID_SPIN_TIMEOUT="$LAM_IMPID_SPIN_TIMEOUT" \
    mpirun -client "$uk_clusters" "$srv" -np "$LAM_PROCS" "$lam_prog" "$@"

sides_supervise "$timeout"
# LAM's lamd holds mpirun's stdout (it forwards the procs' output): the "[lam] " prefixer
# sees its end only when the universe halts.
lam_halt_all
sides_drain

SUMMARY="unikernel side exit $(sides_end uk)"
for c in $(seq 2 "$uk_clusters"); do SUMMARY+=", unikernel cluster $c exit $(sides_end "uk$c")"; done
SUMMARY+=", LAM side exit $(sides_end lam)"
failed=$(sides_failed)
# Server and relay exit 0 after FINI from both clients; after a failure they may wait.
sides_end_daemons
[ "$DAEMONS_FAILED" = 0 ] || failed=1
echo "uk-with-lam: $SUMMARY"
if [ "$failed" = 1 ]; then
    sides_daemon_logs
    echo "uk-with-lam: FAILED"
    exit 1
fi
echo "uk-with-lam: both sides ended with 0"
