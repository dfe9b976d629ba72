# newlib (built twice into the cache by mk/newlib.sh) and lwIP 2.1.3 (Debian's source
# package, unpacked into the cache; its sources are compiled by mk/lwip.mk).
PKGS+=(newlib-source)

fetch_lwip_source() {
    local dst="$CACHE/src/lwip"
    [ -f "$dst/.unpacked" ] && return 0
    say "fetching lwIP's source (apt-get source lwip) into $dst"
    ensure_deb_src
    apt_update
    rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
    (cd "$dst.tmp" && apt-get source -qq lwip >/dev/null 2>&1) ||
        { say "apt-get source lwip failed"; exit 1; }
    local top
    top=$(find "$dst.tmp" -maxdepth 1 -mindepth 1 -type d -name 'lwip-*' | head -n1)
    [ -f "$top/src/core/tcp.c" ] || { say "unexpected lwip source layout in $dst.tmp"; exit 1; }
    rm -rf "$dst" && mv "$top" "$dst" && rm -rf "$dst.tmp"
    touch "$dst/.unpacked"
}
POST+=(fetch_lwip_source)
