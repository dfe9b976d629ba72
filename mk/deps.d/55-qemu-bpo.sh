# QEMU 10 from bookworm-backports, side by side with Debian 12's QEMU 7.2, for the knl
# board's tests only.
#
# Why: QEMU 7.2's TCG has no x2APIC and refuses more than 255 CPUs; the knl board
# (Xeon Phi class: up to 288 logical CPUs, APIC ids above 255) needs both. bookworm-
# backports' QEMU 10.0 emulates x2APIC under TCG.
# Decision (for now): only tests/knl and `qemu/ukboot --board knl` use it. Every other
# test, baseline and benchmark figure stays on the host's 7.2, so the suite's figures stay
# comparable with the ones already recorded; moving everything is a later, separate change.
# How: the packages are NOT installed (that would upgrade the host's qemu, which every
# other test uses): `apt-get download` fetches the .debs of qemu-system-x86,
# qemu-system-data, the firmware and the libraries bookworm lacks, `dpkg -x` unpacks them
# into $CACHE/qemu-bpo. qemu/qemu-bpo runs that binary with LD_LIBRARY_PATH set to the
# unpacked libraries and `-L` pointing at its own firmware directory.
# The backports source is added (deb.debian.org, bookworm's signing key); backports are
# never installed by default (apt gives them priority 100), so adding it changes nothing
# else on the machine.

QEMU_BPO_DIR="$CACHE/qemu-bpo"
# Packages unpacked from backports (and their bookworm-lacking libraries). Firmware
# (seabios, ipxe) is the host's own bookworm one unless backports has a newer: taken from
# backports too so the data dir is self-contained.
QEMU_BPO_PKGS=(qemu-system-x86 qemu-system-data qemu-system-common seabios ipxe-qemu)

ensure_bpo_source() {
    local f=/etc/apt/sources.list.d/ukmpi-bookworm-backports.sources
    grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
    say "adding bookworm-backports ($f)"
    {
        echo "Types: deb"
        echo "URIs: http://deb.debian.org/debian"
        echo "Suites: bookworm-backports"
        echo "Components: main"
        echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
    } | $SUDO tee "$f" >/dev/null
    apt_updated=0
}

# The shared libraries backports' qemu-system-x86 depends on that are not installed here
# at a version that satisfies it (none on this machine: bookworm's QEMU 7.2 already pulled
# them in). They are downloaded and unpacked next to QEMU, never installed.
bpo_missing_libs() {
    local name ver iv
    apt-cache show "qemu-system-x86/bookworm-backports" 2>/dev/null |
        awk -F': ' '/^Depends:/ {print $2; exit}' | tr ',' '\n' |
        sed -E 's/^ +//; s/ *\|.*//' | while read -r name _ ver; do
        ver=${ver%)}
        case $name in lib* | zlib*) ;; *) continue ;; esac
        iv=$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)
        if [ -z "$iv" ] || { [ -n "$ver" ] && ! dpkg --compare-versions "$iv" ge "$ver"; }; then
            echo "$name"
        fi
    done
}

fetch_qemu_bpo() {
    [ -x "$QEMU_BPO_DIR/root/usr/bin/qemu-system-x86_64" ] && [ -f "$QEMU_BPO_DIR/.unpacked" ] &&
        return 0
    ensure_bpo_source
    apt_update
    local dl="$QEMU_BPO_DIR/debs" p libs
    rm -rf "$QEMU_BPO_DIR" && mkdir -p "$dl"
    mapfile -t libs < <(bpo_missing_libs)
    say "fetching QEMU from bookworm-backports into $QEMU_BPO_DIR (+ ${libs[*]:-no extra libs})"
    for p in "${QEMU_BPO_PKGS[@]}" "${libs[@]}"; do
        # A package backports lacks (ipxe-qemu: not rebuilt there) comes from bookworm.
        # The sandbox note (root downloading into a root-only cache) is noise: dropped.
        (cd "$dl" && { apt-get download -qq "$p/bookworm-backports" 2>/dev/null ||
            apt-get download -qq "$p" 2>&1 | grep -v unsandboxed >&2; }) ||
            true
        ls "$dl"/"${p}"_*.deb >/dev/null 2>&1 || { say "apt-get download $p failed"; exit 1; }
    done
    for p in "$dl"/*.deb; do
        dpkg -x "$p" "$QEMU_BPO_DIR/root"
    done
    qemu/qemu-bpo --version >/dev/null || { say "the unpacked QEMU does not run"; exit 1; }
    touch "$QEMU_BPO_DIR/.unpacked"
}
POST+=(fetch_qemu_bpo)
