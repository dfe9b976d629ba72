# shellcheck shell=sh
# tests/kmod/guest/kmodlib.sh: shell shared by the module test guests' /init scripts
# (sourced as /kmodlib.sh; busybox sh). The host side is tests/kmod/guestlib.sh.

# The group an administrator grants the devices to (host-kmod/60-ukmpi.rules names it
# ukmpi); here a number, as the guest has no /etc/group. tests/kmod/kt.h's KT_GID agrees.
KMOD_GID=4242

# kmod_grant DEV...: what the udev rule does on a real node: DEV owned by root:KMOD_GID,
# mode 0660. The hostile cases run as nobody with and without that group.
kmod_grant() {
    for d in "$@"; do
        [ -e "$d" ] && chgrp "$KMOD_GID" "$d" && chmod 0660 "$d"
    done
}

# kmod_dmesg: "ok dmesg" or "FAIL dmesg: ..." with the first lines of any report the
# kernel makes of a bug: BUG/WARNING/oops, slub_debug's poison and red-zone checks (the
# guests boot with slub_debug=FZPU), soft lockups, RCU stalls, hung tasks.
KMOD_BUG_RE='BUG|WARNING|Oops|general protection|Call Trace|Poison overwritten|Redzone|Object padding|soft lockup|rcu: INFO|blocked for more than'
kmod_dmesg() {
    bad=$(dmesg | grep -E "$KMOD_BUG_RE" | head -n 5)
    if [ -n "$bad" ]; then echo "FAIL dmesg: $bad"; else echo "ok dmesg"; fi
}

# kmod_fuzz MODULE CHECK...: the fuzz case of MODULE (o2g or kacc): /kfuzz (tests/kmod/kfuzz.c)
# with the seed, budget and avoided families of the kernel command line (kfuzz_seed=,
# kfuzz_secs=, kfuzz_avoid=: the host scripts' KMOD_FUZZ_SEED, KMOD_FUZZ_SECS,
# KMOD_FUZZ_AVOID), then the kernel log since it started (kmod_dmesg's reports), then CHECK
# (a functional case, whose output must start with "ok ") to show the module still works.
# One line: "ok fuzz" (after a "kmod: fuzz: ..." line: operations, seed) or "FAIL fuzz: why
# (seed; how to run it again)"; before it,
# kfuzz's output, and on a failure the kernel log's new lines and the last operations of
# every fuzzer thread (its trace), all prefixed "kfuzz| ".
kmod_fuzz() {
    mod=$1
    shift
    secs=20 seed=1 avoid=none
    read -r cmdline </proc/cmdline
    for w in $cmdline; do
        case $w in
        kfuzz_secs=*) secs=${w#kfuzz_secs=} ;;
        kfuzz_seed=*) seed=${w#kfuzz_seed=} ;;
        kfuzz_avoid=*) avoid=${w#kfuzz_avoid=} ;;
        esac
    done
    [ -n "$avoid" ] || avoid=none
    t0=$(cut -d' ' -f1 /proc/uptime)
    rm -f /tmp/kfuzz.trace /tmp/kfuzz.trace.first
    /kfuzz "$mod" "$seed" "$secs" --avoid "$avoid" --trace /tmp/kfuzz.trace >/tmp/kfuzz.out 2>&1
    sed 's/^/kfuzz| /' /tmp/kfuzz.out
    # the kernel log from t0 on (its timestamps are seconds since boot, as uptime's)
    dmesg | awk -v t="$t0" '{ s = $0; sub(/^\[ */, "", s); if (s + 0 >= t) print }' >/tmp/kfuzz.dmesg
    bad=$(grep -E "$KMOD_BUG_RE" /tmp/kfuzz.dmesg | head -n 3 | tr '\n' ' ')
    again="seed $seed; again: kfuzz $mod $seed $secs --avoid $avoid"
    why=''
    if [ -n "$bad" ]; then
        why="kernel log: $bad"
    elif ! grep -q '^kfuzz: clean' /tmp/kfuzz.out; then
        why=$(grep -m1 '^kfuzz: FAIL' /tmp/kfuzz.out || echo "kfuzz: no verdict")
        why=${why#kfuzz: FAIL }
    else
        out=$("$@" 2>&1)
        case $out in
        "ok "*) ;;
        *) why="afterwards, $*: $(echo "$out" | head -n 1)" ;;
        esac
    fi
    if [ -z "$why" ]; then
        echo "kmod: fuzz: $(grep -m1 -o '[0-9]* operations in [0-9.]* s' /tmp/kfuzz.out), $again"
        echo "ok fuzz"
        return
    fi
    sed -n '1,200p' /tmp/kfuzz.dmesg | sed 's/^/kfuzz| dmesg: /'
    # the last 12 operations of every thread and process, when the kernel first reported
    # a bug if it did (kfuzz's snapshot), else at the end
    tf=/tmp/kfuzz.trace
    [ ! -s "$tf.first" ] || tf=$tf.first
    echo "kfuzz| trace: from $tf"
    awk '/^== /{ if (h) { print h; for (i = (n > 12 ? n - 12 : 0); i < n; i++) print l[i] }
        h = $0; n = 0; next } { l[n++] = $0 }
        END { if (h) { print h; for (i = (n > 12 ? n - 12 : 0); i < n; i++) print l[i] } }' \
        "$tf" 2>/dev/null | sed 's/^/kfuzz| trace: /'
    echo "FAIL fuzz: $why ($again)"
}
