#!/usr/bin/env bash
# The README's "Not implemented" list against mpi/lib/unimpl.c: every function unimpl.c
# defines must be listed, every name listed must be defined there, and each stub must
# name itself in its abort message. README names are the backquoted MPI_ names on the
# list's lines ("- " items and their continuation lines) under "### Not implemented", up to
# the next heading. One line per check; closing line "docs: N passed, N failed".
# README and SRC may be overridden (to show the test failing on an edited copy).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
readme=${README:-docs/status.md}
src=${SRC:-mpi/lib/unimpl.c}
pass=0 fail=0
ok() { echo "PASS docs $1"; pass=$((pass + 1)); }
bad() { echo "FAIL docs $1"; fail=$((fail + 1)); }

# Defined functions (optionally weak) and the names their aborts print, sorted.
defined=$(sed -nE 's/^(__attribute__\(\(weak\)\) )?int (MPI_[A-Za-z_]+)\(.*/\2/p' "$src" | sort)
printed=$(grep -oE 'err_unimplemented\("MPI_[A-Za-z_]+"\)' "$src" | sed -E 's/.*"(.*)".*/\1/' |
    sort)
# shellcheck disable=SC2016 # the backquotes are Markdown, not a shell expansion
listed=$(awk '/^### Not implemented/ { on = 1; next } /^#/ { on = 0 }
              on && /^(- |  )/' "$readme" | grep -oE '`MPI_[A-Za-z_]+`' | tr -d '`' | sort)

if [ -n "$defined" ]; then ok "unimpl.c defines stubs ($(wc -l <<<"$defined"))"
else bad "no stub found in $src"; fi
if [ -n "$listed" ]; then ok "README lists names ($(wc -l <<<"$listed"))"
else bad "no \"### Not implemented\" list found in $readme"; fi
if [ "$defined" = "$printed" ]; then
    ok "every stub in unimpl.c aborts naming itself"
else
    bad "stubs and their abort messages differ: $(comm -3 <(echo "$defined") <(echo "$printed") |
        tr -s ' \t\n' ' ')"
fi
dups=$(uniq -d <<<"$listed")
if [ -z "$dups" ]; then ok "README lists each name once"
else bad "README lists twice: $dups"; fi

for f in $defined; do
    if grep -qx "$f" <<<"$listed"; then ok "$f (aborts) is listed in README"
    else bad "$f aborts as not implemented (unimpl.c) but README does not list it"; fi
done
for f in $(uniq <<<"$listed"); do
    grep -qx "$f" <<<"$defined" || bad "README lists $f as not implemented but unimpl.c has no stub for it"
done
echo "docs: $pass passed, $fail failed"
[ $fail = 0 ]
