# impi_lib.sh: helpers for the IMPI interop tests and benchmarks (sourced, bash).
# LAM/MPI 7.1.4 (built by mk/deps.d/30-lam.sh) refuses to run as root, so every LAM command
# runs as the unprivileged user $TUSER with its own HOME/TMPDIR under $WORK.
# Every process started here is tracked and killed by impi_cleanup (installed as a trap).

: "${UKMPI_CACHE:=$HOME/.cache/ukmpi}"
LAM=$UKMPI_CACHE/lam-7.1.4
TUSER=ukmpi-test
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${B:-build}
SERVER_BIN=$ROOT/$B/net/impi-server
RELAY_BIN=$ROOT/$B/net/impi-relay
LAM_TIMEOUT=${LAM_TIMEOUT:-120} # safety net only: a healthy run takes seconds
# LAM's impid polls its host sockets with a 50 ms timeout and only then looks at its local
# procs' requests, which puts a 50 ms floor under every cross-client message. LAM reads
# this override (milliseconds, > 0) in otb/sys/impid/router.cc.
export LAM_IMPID_SPIN_TIMEOUT=${LAM_IMPID_SPIN_TIMEOUT:-1}
PIDS=()
NETNS=()
# Namespace names carry this run's pid: two runs at once (two worktrees, CI) must not
# delete each other's topology. <ns>A etc. in comments stand for ${NSP}A.
NSP=ukm$(printf '%x' $$)
UNIVERSES=()

# Creates the unprivileged user (idempotent) and the work directory.
impi_setup() {
    [ -x "$LAM/bin/mpirun" ] || { echo "LAM not built: run 'make deps' (expected $LAM)"; exit 1; }
    id -u "$TUSER" >/dev/null 2>&1 ||
        useradd --system --no-create-home --shell /usr/sbin/nologin "$TUSER" ||
        { echo "cannot create user $TUSER"; exit 1; }
    WORK=$(mktemp -d /tmp/ukmpi-impi.XXXXXX)
    chmod 755 "$WORK"
    mkdir -p "$WORK/home" "$WORK/tmp" "$WORK/sess" "$WORK/log"
    echo "localhost cpu=4" >"$WORK/boot"
    # The cache usually lives under root's private HOME: give the test user a copy (41 MB,
    # under a second) and point LAM at it with LAMHOME.
    LAM_CACHED=$(readlink -f "$LAM")
    cp -a "$LAM_CACHED" "$WORK/lam"
    LAM=$WORK/lam
    chown -R "$TUSER:" "$WORK/home" "$WORK/tmp" "$WORK/sess"
    trap impi_cleanup EXIT
    trap 'exit 130' INT TERM
}

# Runs a command as $TUSER with a clean LAM environment: asuser [VAR=value...] cmd args.
asuser() {
    setpriv --reuid="$TUSER" --regid="$TUSER" --init-groups \
        env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" LAMHOME="$LAM" \
        LAM_MPI_SESSION_PREFIX="$WORK/sess" "$@"
}

# Runs a command in network namespace $1 ("" = the current one).
inns() {
    local ns=$1
    shift
    if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# Compiles the test program with LAM's mpicc. Compiling is the one LAM step root may do,
# and must: LAM's wrapper hard-codes the cache's include path, which the user cannot read.
impi_build_prog() {
    "$LAM_CACHED/bin/mpicc" -O2 -o "$WORK/tmp/impi_prog" "$ROOT/tests/interop/impi_prog.c" ||
        { echo "mpicc failed"; exit 1; }
    chmod 755 "$WORK/tmp/impi_prog"
    PROG=$WORK/tmp/impi_prog
}

# Boots LAM universe $1 (session suffix) in namespace $2.
lam_boot() {
    inns "$2" timeout 60 setpriv --reuid="$TUSER" --regid="$TUSER" --init-groups \
        env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" LAMHOME="$LAM" \
        LAM_MPI_SESSION_PREFIX="$WORK/sess" LAM_MPI_SESSION_SUFFIX="$1" \
        LAM_IMPID_SPIN_TIMEOUT="$LAM_IMPID_SPIN_TIMEOUT" lamboot "$WORK/boot" >"$WORK/log/lamboot-$1.log" 2>&1 ||
        { echo "lamboot $1 failed:"; cat "$WORK/log/lamboot-$1.log"; exit 1; }
    UNIVERSES+=("$1:$2")
}

# Halts every booted universe (after lamclean, which removes leftover impid processes).
lam_halt_all() {
    local u
    for u in "${UNIVERSES[@]}"; do
        inns "${u#*:}" timeout 20 setpriv --reuid="$TUSER" --regid="$TUSER" --init-groups \
            env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" LAMHOME="$LAM" \
            LAM_MPI_SESSION_PREFIX="$WORK/sess" LAM_MPI_SESSION_SUFFIX="${u%%:*}" \
            sh -c 'lamclean >/dev/null 2>&1; lamhalt >/dev/null 2>&1' || true
    done
    UNIVERSES=()
}

# Cleans up lams between tests: leftover jobs from a failed run would poison the next.
lam_clean_all() {
    local u
    for u in "${UNIVERSES[@]}"; do
        inns "${u#*:}" timeout 20 setpriv --reuid="$TUSER" --regid="$TUSER" --init-groups \
            env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" LAMHOME="$LAM" \
            LAM_MPI_SESSION_PREFIX="$WORK/sess" LAM_MPI_SESSION_SUFFIX="${u%%:*}" \
            lamclean >/dev/null 2>&1 || true
    done
}

# Starts a daemon in the background in namespace $1, logging to $2; its first stdout line
# (ip:port) lands in $2.out. Sets DAEMON_PID.
start_daemon() {
    local ns=$1 log=$2
    shift 2
    # Not through inns: a function run with & is a subshell whose pid is not the daemon's,
    # and killing it would leave the daemon running; ip netns exec and timeout keep $!.
    if [ -n "$ns" ]; then
        ip netns exec "$ns" timeout $((LAM_TIMEOUT + 60)) "$@" >"$log.out" 2>"$log" &
    else
        timeout $((LAM_TIMEOUT + 60)) "$@" >"$log.out" 2>"$log" &
    fi
    DAEMON_PID=$!
    PIDS+=("$DAEMON_PID")
    local i
    for i in $(seq 100); do
        [ -s "$log.out" ] && return 0
        kill -0 "$DAEMON_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "daemon $* did not start:"
    cat "$log"
    return 1
}

# mpirun of client $2 in universe $1 (namespace $3), advertised address $4, server $5,
# $6 procs, then program arguments. CLIENT_AUTH (default "IMPI_AUTH_NONE=") is the
# authentication variable given to LAM, e.g. "IMPI_AUTH_KEY=1234567". Runs in the background; sets MPIRUN_PID; output in
# $WORK/log/mpirun-$1.log.
start_client() {
    local u=$1 client=$2 ns=$3 ip=$4 srv=$5 np=$6 log=$1
    shift 6
    [ "$u" = A ] && u=${LAMU_A:-A}
    [ "$u" = B ] && u=${LAMU_B:-B}
    inns "$ns" timeout "$LAM_TIMEOUT" setpriv --reuid="$TUSER" --regid="$TUSER" --init-groups \
        env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH="$LAM/bin:/usr/bin:/bin" LAMHOME="$LAM" \
        LAM_MPI_SESSION_PREFIX="$WORK/sess" LAM_MPI_SESSION_SUFFIX="$u" \
        "${CLIENT_AUTH:-IMPI_AUTH_NONE=}" IMPI_HOST_NAME="$ip" LAM_IMPID_SPIN_TIMEOUT="$LAM_IMPID_SPIN_TIMEOUT" \
        mpirun -client "$client" "$srv" -np "$np" "$PROG" "$@" >"$WORK/log/mpirun-$log.log" 2>&1 &
    MPIRUN_PID=$!
    PIDS+=("$MPIRUN_PID")
}

# Kills what this script started (by pid), halts LAM, removes namespaces and the work dir.
impi_cleanup() {
    local p ns
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    lam_halt_all
    for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}

# Creates namespace $1 with loopback up; registered for deletion.
mkns() {
    ip netns del "$1" 2>/dev/null
    ip netns add "$1"
    NETNS+=("$1")
    ip -n "$1" link set lo up
}

# veth pair between namespaces: link NS1 IF1 ADDR1/len NS2 IF2 ADDR2/len
link_ns() {
    ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
    ip -n "$1" addr add "$3" dev "$2"
    ip -n "$4" addr add "$6" dev "$5"
    ip -n "$1" link set "$2" up
    ip -n "$4" link set "$5" up
}

# shellcheck source=tests/interop/check_lib.sh
. "$ROOT/tests/interop/check_lib.sh"

# Waits for pid $1 and stores its exit status in variable $2 (not via $(...): a
# subshell cannot wait for this shell's children).
wait_rc() {
    wait "$1" 2>/dev/null
    printf -v "$2" '%s' $?
}

# Counts the CHECK lines of a suite run in log $2 under test prefix $1.
count_checks() {
    local pre=$1 log=$2 line
    while read -r line; do
        set -- $line
        if [ "$3" = ok ]; then ok "$pre/$2"; else bad "$pre/$2"; fi
    done < <(grep '^CHECK ' "$log")
}
