#!/usr/bin/env bash
# uk-with-linux.sh: couples a unikernel WaitIO PB on a private network with a Linux PB
# (Open MPI) on the "global" network through waitio-gw on a front-end (issue 14), the entry
# point of the unikernel WaitIO tests that users can run with their own programs:
#
#   tests/waitio/uk-with-linux.sh [--uk-nodes N] [--uk-ranks R] [--linux-procs P]
#                                 [--linux-pbs K] [--timeout S] [-v] UK_IMAGE LINUX_PROG [ARGS...]
#
#   UK_IMAGE      the program built with `mpi/bin/ukmpicc ... -lwaitio`: N nodes x R ranks
#   LINUX_PROG    the same program built with Open MPI's mpicc and -lwaitio: P procs
#   ARGS          given to both programs
#   --linux-pbs K Linux PBs (1..3, default 1), each its own mpirun of P procs: PB 0 (it
#                 hosts the master: the gateway cannot put PB 0 behind it) and PBs 2..K;
#                 the unikernel job is PB 1
#   --uk-nodes N  unikernel nodes (1..8, default 2); node I is 10.0.0.(I+1)
#   --uk-ranks R  ranks per unikernel node (1..2, default 2)
#   --linux-procs P  Linux processes (1..8, default 2)
#   --timeout S   safety net only (default 300)
#   -v            the unikernel's whole console (qemu/ukrun -v)
#
# Topology (nothing touches the host's network): the unikernel hub joins a TAP device
# 10.0.0.254/24 in a front-end namespace, whose other leg (10.77.4.101) is a veth into a
# global namespace (a bridge at 10.77.4.2) where the Linux PB runs. waitio-gw on the
# front-end is the private PB's master address (10.0.0.254:7100) and publishes its
# processes at 10.77.4.101; the unikernel cannot reach the global namespace directly.
# Output: every line of a side prefixed "[uk] ", "[linux] ", then what the gateway printed
# ("[waitio-gw] ", its connection counters) and how each side ended.
# Exit: 0 if both sides and the gateway exited 0; 1 if one failed or hung; 2 on a usage
# mistake. Needs root (namespaces, TAP).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$ d' | sed 's/^# \{0,1\}//'; }
uk_nodes=2 uk_ranks=2 linux_procs=2 linux_pbs=1 timeout=${UK_WAITIO_TIMEOUT:-300} ukrun_opts=()
while [ $# -gt 0 ]; do
    case $1 in
    -v) ukrun_opts+=(-v); shift ;;
    --uk-nodes) uk_nodes=${2-}; shift 2 || { echo "uk-with-linux: --uk-nodes needs N" >&2; exit 2; } ;;
    --uk-ranks) uk_ranks=${2-}; shift 2 || { echo "uk-with-linux: --uk-ranks needs R" >&2; exit 2; } ;;
    --linux-procs) linux_procs=${2-}; shift 2 || { echo "uk-with-linux: --linux-procs needs P" >&2; exit 2; } ;;
    --linux-pbs) linux_pbs=${2-}; shift 2 || { echo "uk-with-linux: --linux-pbs needs K" >&2; exit 2; } ;;
    --timeout) timeout=${2-}; shift 2 || { echo "uk-with-linux: --timeout needs S" >&2; exit 2; } ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "uk-with-linux: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "uk-with-linux: need UK_IMAGE and LINUX_PROG (see --help)" >&2; exit 2; }
uk_image=$(readlink -f "$1") linux_prog=$(readlink -f "$2")
shift 2
[ -f "$uk_image" ] || { echo "uk-with-linux: $uk_image: no such file" >&2; exit 2; }
[ -x "$linux_prog" ] || { echo "uk-with-linux: $linux_prog: not an executable" >&2; exit 2; }
[[ $uk_nodes =~ ^[1-8]$ ]] || { echo "uk-with-linux: --uk-nodes $uk_nodes: must be 1..8" >&2; exit 2; }
[[ $uk_ranks =~ ^[12]$ ]] || { echo "uk-with-linux: --uk-ranks $uk_ranks: must be 1..2" >&2; exit 2; }
[[ $linux_procs =~ ^[1-8]$ ]] || { echo "uk-with-linux: --linux-procs $linux_procs: must be 1..8" >&2; exit 2; }
[[ $linux_pbs =~ ^[1-3]$ ]] || { echo "uk-with-linux: --linux-pbs $linux_pbs: must be 1..3" >&2; exit 2; }
[[ $timeout =~ ^[1-9][0-9]*$ ]] || { echo "uk-with-linux: --timeout $timeout: whole seconds > 0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "uk-with-linux: needs root (network namespaces, TAP)" >&2; exit 2; }

B=${B:-build}
GW_BIN=$root/$B/waitio/bin/waitio-gw
[ -x "$GW_BIN" ] || { echo "uk-with-linux: $GW_BIN not built (make all)" >&2; exit 2; }
# impi_lib.sh: namespaces, daemons, the work directory, cleanup (no LAM is used here).
LAM_TIMEOUT=$timeout
# shellcheck source=tests/interop/impi_lib.sh
. "$root/tests/interop/impi_lib.sh"
readonly TAP_ADDR=10.0.0.254 TAP_PREFIX=24 TAP_IF=uktap0
readonly GLOBAL_HOST=10.77.4.2 FRONT_ADDR=10.77.4.101 GLOBAL_PREFIX=24
readonly MASTER_PORT=7100 # every published WaitIO script uses it
SIDES=(uk linux)
for k in $(seq 2 "$linux_pbs"); do SIDES+=("linux$k"); done
SIDES_NAME=uk-with-linux SIDES_SERVICES=(waitio-gw)
# shellcheck source=tests/interop/sides_lib.sh
. "$root/tests/interop/sides_lib.sh"

uwl_cleanup() {
    sides_stop_all
    impi_cleanup
}
WORK=$(mktemp -d /tmp/uk-waitio.XXXXXX)
mkdir -p "$WORK/log"
trap uwl_cleanup EXIT

front=${NSP}F glob=${NSP}G
sides_tap_ns "$front" "$TAP_IF" "$TAP_ADDR/$TAP_PREFIX"
mkns "$glob"
{ ip -n "$glob" link add br0 type bridge && ip -n "$glob" addr add "$GLOBAL_HOST/$GLOBAL_PREFIX" dev br0 &&
    ip -n "$glob" link set br0 up &&
    ip link add glob netns "$front" type veth peer name f1 netns "$glob" &&
    ip -n "$front" addr add "$FRONT_ADDR/$GLOBAL_PREFIX" dev glob && ip -n "$front" link set glob up &&
    ip -n "$glob" link set f1 master br0 up; } || { echo "uk-with-linux: cannot link the front-end to the global bridge"; exit 1; }

npb=$((linux_pbs + 1))
sides_daemon waitio-gw "$front" "$WORK/log/waitio-gw.log" "$GW_BIN" --private "$TAP_ADDR:$MASTER_PORT" \
    --public "$FRONT_ADDR" --master "$GLOBAL_HOST:$MASTER_PORT"
echo "uk-with-linux: waitio-gw at $TAP_ADDR:$MASTER_PORT (private), $FRONT_ADDR (public) in namespace $front"
echo "uk-with-linux: unikernel PB 1 on nodes 10.0.0.1..10.0.0.$uk_nodes; Linux PB 0$([ "$linux_pbs" = 1 ] || echo " and 2..$linux_pbs") at $GLOBAL_HOST in namespace $glob"

sides_launch uk "$root/qemu/ukrun" "${ukrun_opts[@]}" -n $((uk_ranks * uk_nodes)) \
    --nodes "$uk_nodes" --timeout "$timeout" --hub-tap "$TAP_IF" --hub-netns "$front" \
    --env WAITIO_MASTER_HOST="$TAP_ADDR" --env WAITIO_MASTER_PORT="$MASTER_PORT" \
    --env WAITIO_PBID=1 --env WAITIO_NPB="$npb" "$uk_image" "$@"
for pb in 0 $(seq 2 "$linux_pbs"); do
    side=linux
    [ "$pb" = 0 ] || side=linux$pb
    sides_launch "$side" ip netns exec "$glob" timeout "$timeout" env OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
        WAITIO_MASTER_HOST="$GLOBAL_HOST" WAITIO_MASTER_PORT="$MASTER_PORT" \
        WAITIO_PBID="$pb" WAITIO_NPB="$npb" \
        mpirun --oversubscribe -np "$linux_procs" -x WAITIO_MASTER_HOST -x WAITIO_MASTER_PORT \
        -x WAITIO_PBID -x WAITIO_NPB "$linux_prog" "$@"
done

sides_supervise "$timeout"
sides_drain
SUMMARY="unikernel side exit $(sides_end uk), Linux side exit $(sides_end linux)"
for k in $(seq 2 "$linux_pbs"); do SUMMARY+=", Linux PB $k exit $(sides_end "linux$k")"; done
failed=$(sides_failed)
sides_end_daemons
[ "$DAEMONS_FAILED" = 0 ] || failed=1
echo "uk-with-linux: $SUMMARY"
if [ "$failed" = 1 ]; then
    sides_daemon_logs
    echo "uk-with-linux: FAILED"
    exit 1
fi
echo "uk-with-linux: both sides ended with 0"
