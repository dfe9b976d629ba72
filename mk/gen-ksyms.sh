#!/usr/bin/env bash
# gen-ksyms.sh ELF OUT.S: the kernel's function symbols as a sorted table, in assembly,
# placed in .ksyms (see linker/kernel.ld and unikernel/kernel/ksyms.c).
set -euo pipefail
elf=$1 out=$2
nm -n --defined-only "$elf" | awk '
    $2 ~ /^[tTwW]$/ && $1 ~ /^ffffffff[89a-f]/ { addr[n] = $1; name[n] = $3; n++ }
    END {
        print "\t.section .ksyms, \"a\""
        print "\t.p2align 3"
        print "\t.globl ksyms_count, ksyms_table, ksyms_names"
        print "ksyms_count:\n\t.quad " n
        print "ksyms_table:"
        off = 0
        for (i = 0; i < n; i++) { printf "\t.quad 0x%s, %d\n", addr[i], off; off += length(name[i]) + 1 }
        print "ksyms_names:"
        for (i = 0; i < n; i++) printf "\t.asciz \"%s\"\n", name[i]
    }' > "$out"
