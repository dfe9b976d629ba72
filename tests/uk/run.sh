#!/usr/bin/env bash
# tests/uk/run.sh [FILTER]: boot the test image once per case in tests/uk/cases/*.case and
# check what the console shows and the exit code. Closing line: "uk: N passed, N failed".
#
# A case file holds "key: value" lines:
#   test:    KTEST name (becomes test=NAME on the kernel command line), or
#   app:     an application of tests/uk/apps/, run as a job through qemu/ukrun -v
#   file:    instead of app: any image file under $B run the same way (the loader's
#            crafted images, $B/loader/elf/, made by tests/fuzz/pvas_images.c)
#   args:    the test's arguments (targs=...), or the application's (split on spaces)
#   ranks:   ranks of the job (app cases; default 1)     nodes: nodes of the job (default 1)
#   verbose: no = run ukrun without -v, checking what a user sees by default (default yes)
#   smp:     CPUs (default 1)          mem:     memory (default 512M)
#   machine: pc | q35 (default pc)     image:   elf | mb (PVH ELF or Multiboot1 image)
#   timeout: seconds (default 60; only a safety net: the check never depends on time)
#   host_cpus: host CPUs QEMU may use (taskset -c LIST): vCPUs sharing one host core preempt
#            each other at arbitrary points, as on a loaded host
#   env:     NAME=VALUE in every rank's environment (app/file cases; repeatable), e.g.
#            "env: UKMPI_CAD_PROGRESS=poll"; reaches the ranks through qemu/ukrun --env
#            (job.conf in the initrd). Without an UKMPI_SPIN_NS entry, ukrun sets
#            UKMPI_SPIN_NS=0 when nodes x smp exceeds the host CPUs it may use (nproc,
#            so host_cpus counts): a case that is about spinning sets it itself.
#   exit:    expected guest exit code (default 0)
#   expect:  an extended regex some console line must match (repeatable, checked in order)
#   reject:  an extended regex no console line may match (repeatable)
set -uo pipefail
cd "$(dirname "$0")/../.."
filter=${1:-}
B=${B:-build}
pass=0 fail=0
logdir=$B/uk/logs
mkdir -p "$logdir"

for c in tests/uk/cases/*.case; do
    name=$(basename "$c" .case)
    [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
    test= app= file= ranks=1 nodes=1 targs= smp=1 mem=512M machine=pc image=elf timeout=60 want_exit=0
    host_cpus= verbose=yes
    expects=() rejects=() envs=()
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
        key=${line%%:*} val=${line#*:}
        val=${val#"${val%%[![:space:]]*}"}
        case $key in
        test) test=$val ;; app) app=$val ;; ranks) ranks=$val ;; nodes) nodes=$val ;;
        args) targs=$val ;; smp) smp=$val ;; mem) mem=$val ;;
        machine) machine=$val ;; image) image=$val ;; timeout) timeout=$val ;;
        exit) want_exit=$val ;; expect) expects+=("$val") ;; reject) rejects+=("$val") ;;
        host_cpus) host_cpus=$val ;; verbose) verbose=$val ;; file) file=$val ;;
        env)
            if [[ ! $val =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]]; then
                echo "FAIL $name: env: wants NAME=VALUE (no spaces), not '$val' in $c"
                fail=$((fail + 1)); continue 2
            fi
            envs+=(--env "$val") ;;
        qemu) ;; # reserved for extra QEMU flags
        *) echo "FAIL $name: unknown key '$key' in $c"; fail=$((fail + 1)); continue 2 ;;
        esac
    done <"$c"
    if [ ${#envs[@]} -gt 0 ] && [ -z "$app$file" ]; then
        echo "FAIL $name: env: is for app/file cases (a kernel test has no environment) in $c"
        fail=$((fail + 1)); continue
    fi
    img=$B/uk/ukernel-test.elf
    [ "$image" = mb ] && img=$B/uk/ukernel-test-mb.bin
    append="test=$test"
    [ -n "$targs" ] && append="$append targs=$targs"
    log=$logdir/$name.log
    pin=()
    [ -n "$host_cpus" ] && pin=(taskset -c "$host_cpus")
    if [ -n "$app$file" ]; then
        bin=$B/apps/$app
        [ -n "$file" ] && bin=$B/$file
        v=-v
        [ "$verbose" = no ] && v=
        # shellcheck disable=SC2086
        "${pin[@]}" qemu/ukrun ${v:+"$v"} -n "$ranks" --nodes "$nodes" --smp "$smp" --mem "$mem" \
            --timeout "$timeout" "${envs[@]}" "$bin" $targs >"$log" 2>&1
    else
        "${pin[@]}" qemu/ukboot --smp "$smp" --mem "$mem" --machine "$machine" --timeout "$timeout" \
            --append "$append" "$img" >"$log" 2>&1
    fi
    rc=$?
    why=
    [ "$rc" = "$want_exit" ] || why="exit code $rc, expected $want_exit"
    # Expectations must appear in order: each one is searched after the previous match.
    from=1
    for re in "${expects[@]}"; do
        n=$(tail -n +"$from" "$log" | grep -nE -m1 -- "$re" | cut -d: -f1)
        if [ -z "$n" ]; then why="${why:+$why; }missing (in order): $re"; break; fi
        from=$((from + n))
    done
    for re in "${rejects[@]}"; do
        grep -qE -- "$re" "$log" && why="${why:+$why; }unexpected: $re"
    done
    if [ -z "$why" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: $why"
        sed 's/^/    | /' "$log" | tail -n 25
        fail=$((fail + 1))
    fi
done
echo "uk: $pass passed, $fail failed"
[ "$fail" = 0 ]
