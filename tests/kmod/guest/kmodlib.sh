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
