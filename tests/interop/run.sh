#!/usr/bin/env bash
# IMPI interop tests against LAM/MPI 7.1.4 (see net/impi/README.md). Needs root (network
# namespaces, the unprivileged LAM user). Closing line: "interop: N passed, N failed".
# IMPI_TESTS selects tests by name (default: all): loopback relay trunk trunk_a2a badinput
# multi3 multi3_trunk multi4 relay2relay ukrun_impi; the unikernel with LAM (impi_t_uklam.sh,
# UK_LAM_MODE=p2p|coll|all): uk_lam uk_lam_2nodes uk_lam_relay uk_lam_3clients; bad input on
# the unikernel's IMPI paths (impi_t_ukbad.sh): uk_bad; a peer that talks after our FINI:
# uk_fini_late
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/interop/impi_lib.sh
TESTS=${IMPI_TESTS:-loopback relay trunk trunk_a2a badinput multi3 multi3_trunk multi4 relay2relay ukrun_impi uk_lam uk_lam_2nodes uk_lam_relay uk_lam_3clients uk_bad uk_fini_late}
for f in tests/interop/impi_t_*.sh; do . "$f"; done
impi_setup
impi_build_prog
for t in $TESTS; do
    echo "--- interop test: $t"
    "t_$t"
    lam_clean_all
done
echo "interop: $TP passed, $TF failed"
[ "$TF" = 0 ]
