#!/usr/bin/env bash
# `make deps`: install whatever is missing from Debian's packages, fetch the Debian
# source packages we build from, and say nothing when everything is already there.
#
# Idempotent by construction: every step first checks whether its result exists.
# Each file in mk/deps.d/ adds packages to PKGS and may add a function to POST,
# which runs after the packages are in (e.g. to fetch a source package).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${UKMPI_CACHE:-$HOME/.cache/ukmpi}
PKGS=()
POST=()
# UKMPI_DEPS=run (the Makefile sets it for `make run` alone): only what the demo needs,
# the files mk/deps.d/0*.sh and 1*.sh. Anything else: every file.
files=(mk/deps.d/*.sh)
[ "${UKMPI_DEPS:-all}" != run ] || files=(mk/deps.d/[01]*.sh)
for f in "${files[@]}"; do
    # shellcheck source=/dev/null
    . "$f"
done

SUDO=
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else SUDO=; fi
fi

say() { printf 'deps: %s\n' "$*" >&2; }

# Packages: ask dpkg once for all of them, install only the missing ones.
missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = installed ] || missing+=("$p")
done

apt_updated=0
apt_update() {
    [ $apt_updated = 1 ] && return 0
    $SUDO apt-get update -qq >/dev/null
    apt_updated=1
}

# A deb-src entry for bookworm main, built from the archive the machine already uses,
# so that `apt-get source` works. Written once, to a file of its own.
ensure_deb_src() {
    local f=/etc/apt/sources.list.d/ukmpi-deb-src.sources
    [ -f "$f" ] && return 0
    if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
        return 0
    fi
    # Reuse the URI and the signing key of the stanza that already serves bookworm main:
    # apt refuses two entries for one archive with different Signed-By values.
    local uri key=
    uri=$(awk '/^URIs:/ {u=$2} /^Suites:.*bookworm( |$)/ && u !~ /security/ {print u; exit}' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    if [ -n "$uri" ]; then
        key=$(awk -v u="$uri" '/^URIs:/ {m=($2==u)} m && /^Signed-By:/ {print $2; exit}' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    else
        uri=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    fi
    [ -n "$uri" ] || { say "no Debian archive for bookworm found in the apt configuration"; exit 1; }
    say "adding a deb-src entry for bookworm main ($f)"
    {
        echo "Types: deb-src"
        echo "URIs: $uri"
        echo "Suites: bookworm"
        echo "Components: main"
        [ -z "$key" ] || echo "Signed-By: $key"
    } | $SUDO tee "$f" >/dev/null
    apt_updated=0
}
export -f apt_update 2>/dev/null || true

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; then
        say "missing packages: ${missing[*]}; run 'make deps' as root (or with sudo)"
        exit 1
    fi
    say "installing: ${missing[*]}"
    apt_update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

mkdir -p "$CACHE"
for fn in "${POST[@]}"; do
    "$fn"
done
