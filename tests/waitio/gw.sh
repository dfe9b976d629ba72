#!/usr/bin/env bash
# waitio-gw on loopback (127.0.0.1 public, 127.0.0.2 private; no root):
#   1-2. tests/waitio/gw_check.py: a scripted master and scripted processes around the
#        gateway: REGISTER/TABLE rewriting byte for byte, bytes both ways, 32 MiB to a slow
#        reader with the gateway's RSS and buffer counters bounded, bad first headers, a
#        side killed or reset mid-stream, each next to a healthy connection that must
#        keep working.
#   3.   two real Linux PBs (Open MPI jobs of tests/waitio/progs/pingpong.c) whose PB 1 is
#        "private": its WAITIO_MASTER_HOST is the gateway's private leg, and the
#        gateway's counters show the traffic went through it.
# One line per check, closing line "N passed, N failed". GW_BIN overrides the gateway;
# GW_TEST_BUF sets its --buf (a huge one shows the back-pressure checks failing).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
GW=${GW_BIN:-$B/waitio/bin/waitio-gw}
WORK=$(mktemp -d /tmp/ukmpi-wgw.XXXXXX)
pass=0 fail=0
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }

[ -x "$GW" ] || make -s "$GW" >/dev/null || { ko "build $GW"; echo "$pass passed, $fail failed"; exit 1; }

# Option mistakes end the gateway at once with status 2 and the option named.
for bad in "--buf 12" "--public 0.0.0.0" "--master nosuchhost.invalid:1"; do
    # shellcheck disable=SC2086 # $bad is several words on purpose
    timeout 10 "$GW" --private 127.0.0.2:0 --public 127.0.0.1:0 --master 127.0.0.1:1 $bad \
        >/dev/null 2>"$WORK/opt.err"
    rc=$?
    opt=${bad%% *}
    if [ "$rc" = 2 ] && grep -q -- "$opt" "$WORK/opt.err"; then ok "option mistake '$bad': exit 2, named"
    else ko "option mistake '$bad': exit $rc, $(head -c 200 "$WORK/opt.err")"; fi
done

# 1-2: the scripted checks print PASS/FAIL lines; a crash counts as one failure.
timeout 180 python3 tests/waitio/gw_check.py "$GW" "$WORK/gw.log" ${GW_TEST_BUF:-} \
    >"$WORK/check.out" 2>&1
rc=$?
cat "$WORK/check.out"
p=$(grep -c '^PASS: ' "$WORK/check.out")
f=$(grep -c '^FAIL: ' "$WORK/check.out")
pass=$((pass + p)) fail=$((fail + f))
if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
    ko "scripted checks ended with status $rc; the gateway's log:"
    tail -n 20 "$WORK/gw.log"
fi
[ "$f" = 0 ] || { echo "--- the gateway's log:"; tail -n 30 "$WORK/gw.log"; }

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
