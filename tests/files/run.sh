#!/usr/bin/env bash
# A job's files (issue 21): qemu/ukrun --file/--dir (a read-only tree in the initrd) and
# --output (files the ranks create, streamed out of each node's second serial port and
# rebuilt on the host by build/host/ukfiles). tests/files/files_app.c is the program.
#  - read:   2 nodes x 2 ranks read deck.txt (--file) and data/sub/nums.bin (--dir) through
#            stdio, open/read/lseek/fstat, stat/access/chdir; every rank's digests equal
#            the host's; writing an input is EROFS, a directory EISDIR, a missing file ENOENT.
#  - write:  the same job with --output: every rank's out/rankN.txt, a 300000-byte file
#            written with fputc (many 4 KiB records), a file with a hole: byte-exact on the
#            host; nothing else appears in the output directory.
#  - noout:  without --output, creating a file or a directory is EROFS.
#  - fail:   a rank that exits 3 after writing: ukrun exits 3 and the file is there.
#  - names:  ukrun refuses tree names with ".." and the same name twice, saying so.
#  - hostile streams: ukfiles refuses a path that climbs out ("../x", "/x"), a write to an
#            id never opened, a truncated record; writes nothing outside the directory and
#            keeps what came before the bad record.
# One line per test; closing line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
app=$work/files_app
UKF=$B/host/ukfiles

ok() {
    echo "PASS files $1"
    pass=$((pass + 1))
}
bad() {
    echo "FAIL files $1: $2"
    [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/    /'
    fail=$((fail + 1))
}

# FNV-1a of a file, as files_app prints it.
fnv() {
    python3 -c 'import sys
h = 2166136261
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 16777619) & 0xffffffff
print("%08x" % h)' "$1"
}

if ! mpi/bin/ukmpicc -O2 -Wall -o "$app" tests/files/files_app.c >"$work/cc.log" 2>&1; then
    bad build "ukmpicc failed" "$work/cc.log"
    echo "files: $pass passed, $((fail + 1)) failed"
    exit 1
fi

in=$work/in
mkdir -p "$in/data/sub"
seq 1 3000 | sed 's/^/deck line /' >"$in/deck.txt"
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 31 + 7) % 251 for i in range(20000)))' \
    >"$in/data/sub/nums.bin"
deck_fnv=$(fnv "$in/deck.txt") nums_fnv=$(fnv "$in/data/sub/nums.bin")
deck_len=$(stat -c %s "$in/deck.txt") nums_len=$(stat -c %s "$in/data/sub/nums.bin")
nums_tail=$(tail -c 4 "$in/data/sub/nums.bin" | od -An -tx1 | tr -d ' \n')
tree=(--file "$in/deck.txt" --dir "$in/data")

# Every rank of the log read the tree right and said ok: 0, or 1 with the reason in $why.
read_ok() {
    local log=$1 ranks=$2 r
    for r in $(seq 0 $((ranks - 1))); do
        grep -q "\[$r\] files: rank $r: deck.txt $deck_len bytes fnv $deck_fnv$" "$log" &&
            grep -q "\[$r\] files: rank $r: data/sub/nums.bin $nums_len bytes fnv $nums_fnv$" "$log" &&
            grep -q "\[$r\] files: rank $r: nums.bin ends $nums_tail$" "$log" &&
            grep -q "\[$r\] files: rank $r: ok$" "$log" || { why="rank $r did not read the tree right"; return 1; }
    done
    ! grep -q FAIL "$log" || { why=$(grep -m1 FAIL "$log"); return 1; }
}

# read: 2 nodes x 2 ranks, no output
log=$work/read.log
qemu/ukrun -n 4 --nodes 2 --timeout 120 "${tree[@]}" "$app" >"$log" 2>&1
rc=$?
if [ $rc = 0 ] && read_ok "$log" 4; then ok read; else bad read "exit $rc; ${why:-}" "$log"; fi

# write: the same with --output
out=$work/out log=$work/write.log
qemu/ukrun -n 4 --nodes 2 --timeout 120 "${tree[@]}" --output "$out" "$app" write >"$log" 2>&1
rc=$?
why=
if [ $rc != 0 ] || ! read_ok "$log" 4; then
    why="exit $rc; ${why:-}"
else
    for r in 0 1 2 3; do
        printf 'rank %d line 0\nrank %d line 1\nrank %d line 2\n' $r $r $r | cmp -s - "$out/out/rank$r.txt" ||
            why="out/rank$r.txt differs"
    done
    python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 3) & 0xff for i in range(300000)))' |
        cmp -s - "$out/big.bin" || why="big.bin differs"
    { printf 'A'; head -c 9999 /dev/zero; printf 'B'; } | cmp -s - "$out/sparse.bin" || why="sparse.bin differs"
    extra=$(cd "$out" && find . -type f | sort | tr '\n' ' ')
    [ "$extra" = "./big.bin ./out/rank0.txt ./out/rank1.txt ./out/rank2.txt ./out/rank3.txt ./sparse.bin " ] ||
        why="unexpected files: $extra"
fi
if [ -z "$why" ]; then ok write; else bad write "$why" "$log"; fi

# noout
log=$work/noout.log
qemu/ukrun -n 1 --timeout 60 "${tree[@]}" "$app" noout >"$log" 2>&1
rc=$?
if [ $rc = 0 ] && read_ok "$log" 1; then ok noout; else bad noout "exit $rc; ${why:-}" "$log"; fi

# fail: written before the failure survives
out=$work/out-fail log=$work/fail.log
qemu/ukrun -n 2 --timeout 60 "${tree[@]}" --output "$out" "$app" fail >"$log" 2>&1
rc=$?
if [ $rc = 3 ] && [ "$(cat "$out/partial.txt" 2>/dev/null)" = "written before the failure" ]; then
    ok fail
else
    bad fail "exit $rc (want 3), partial.txt: $(cat "$out/partial.txt" 2>&1 | head -c 80)" "$log"
fi

# names: refused before anything boots
why=
for spec in "--file $in/deck.txt:../deck" "--file $in/deck.txt:a/./b" "--dir $in/data:x/.."; do
    # shellcheck disable=SC2086
    msg=$(qemu/ukrun -n 1 $spec "$app" 2>&1)
    [ $? = 2 ] && [[ $msg == *"is not a name in the job's tree"* ]] || why="$spec: $msg"
done
msg=$(qemu/ukrun -n 1 --file "$in/deck.txt:d" --file "$in/deck.txt:d" "$app" 2>&1)
[ $? = 2 ] && [[ $msg == *"in the tree twice"* ]] || why="twice: $msg"
if [ -z "$why" ]; then ok names; else bad names "$why"; fi

# hostile streams at ukfiles
hdir=$work/hostile
mkdir -p "$hdir/out"
stream() { printf 'ukfiles 1\n'; printf "$@"; }
why=
stream 'O 0 1 4\ngoodW 0 0 2\nokO 1 1 4\n../xW 1 0 3\nbad' >"$hdir/climb"
stream 'O 0 1 2\n/xW 0 0 3\nbad' >"$hdir/abs"
stream 'W 5 0 3\nbad' >"$hdir/notopen"
stream 'O 0 1 5\nkept1W 0 0 4\nkeptW 0 4 100\nshort' >"$hdir/truncated"
for s in climb abs notopen truncated; do
    if "$UKF" "$hdir/out" "$hdir/$s" >"$hdir/$s.err" 2>&1; then why="$s accepted"; fi
    [ -s "$hdir/$s.err" ] || why="$s: no reason given"
done
[ ! -e "$hdir/x" ] && [ ! -e /x ] || why="a file was written outside the directory"
[ "$(cat "$hdir/out/good" 2>/dev/null)" = ok ] || why="the record before the bad one was lost"
[ "$(cat "$hdir/out/kept1" 2>/dev/null)" = kept ] || why="the write before the truncated one was lost"
grep -q "unsafe path" "$hdir/climb.err" || why="climb: $(cat "$hdir/climb.err")"
if [ -z "$why" ]; then ok hostile-streams; else bad hostile-streams "$why"; fi

echo "files: $pass passed, $fail failed"
[ $fail = 0 ]
