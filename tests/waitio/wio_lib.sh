# shellcheck shell=bash
# tests/waitio/wio_lib.sh: shell shared by the WaitIO suites (base.sh, gw.sh, uk.sh; sourced).

# until_line FILE TEXT PID SECS: 0 once FILE has a line containing TEXT; 1 if process PID
# ended without writing it, or SECS seconds passed (a bounded poll on the condition itself).
until_line() {
    local end=$((SECONDS + $4))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        if ! kill -0 "$3" 2>/dev/null || [ $SECONDS -ge $end ]; then
            grep -qF -- "$2" "$1" 2>/dev/null
            return
        fi
        sleep 0.1
    done
}
