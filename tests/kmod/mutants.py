#!/usr/bin/env python3
"""tests/kmod/mutants.py [CASE...]: shows that each o2g guest test fails when the behaviour
it guards breaks. For each case, one edit (a "mutant") of the module or of mpi/core breaks
that behaviour; the case is run against the mutant (tests/kmod/run.sh) and must fail. The
source is restored afterwards, whatever happens. Not part of `make test` (one guest boot
and one module build per mutant, ~20 s each); run it after changing a test or the module.
Prints one line per mutant and "N passed, N failed" (passed: the test caught the mutant).
"""
import os
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))

# case: (file, text, replacement). The replacement is the bug the case must catch.
M = {
 'eager': ('host-kmod/o2g/o2g_rx.c', 'me = match_arrive(f->eng, &c->probe);\n\t\tif (me) {', 'me = NULL;\n\t\tmatch_arrive(f->eng, &c->probe);\n\t\tif (me) {'),
 'unexp': ('host-kmod/o2g/o2g_main.c', 'p.off = o2g_msg_pos(f, m);', 'p.off = o2g_msg_pos(f, m) + O2G_DUMP_CHUNK;'),
 'race': ('host-kmod/o2g/o2g_main.c', '} else if (m->state == MSG_FILLING) {', '} else if (0) {'),
 'order': ('mpi/core/match.c', 'wild && (!exact || wild->seq < exact->seq) ? wild : exact', 'exact ? exact : wild'),
 'cancel': ('host-kmod/o2g/o2g_main.c', '\t\tlist_move_tail(&r->node, &f->reap);\n\t\tr->state = REQ_DONE;\n\t\tf->promised--;', '\t\tr->state = REQ_DONE;\n\t\tf->promised--;'),
 'backpressure': ('host-kmod/o2g/o2g_rx.c', '\tm = o2g_dump_alloc(f, bytes);\n\tif (!m)\n\t\treturn false;', '\tm = o2g_dump_alloc(f, bytes);\n\tif (!m) {\n\t\to2g_conn_fail(c, -ENOSPC);\n\t\treturn false;\n\t}'),
 'control': ('host-kmod/o2g/o2g_rx.c', 'return w->type == MPE_W_EAGER || w->type == MPE_W_DATA ? w->len : 0;', 'return w->type == MPE_W_EAGER ? w->len : 0;'),
 'rts': ('host-kmod/o2g/o2g_rx.c', '\t\tme = match_arrive(f->eng, &m->me);\n\t\tif (me) {', '\t\tme = NULL;\n\t\tmatch_arrive(f->eng, &m->me);\n\t\tif (me) {'),
 'pieces': ('host-kmod/o2g/o2g_rx.c', '\tc->piece_base = c->body_done;\n\tc->more = true;', '\tc->more = true;'),
 'trunc': ('host-kmod/o2g/o2g_rx.c', 'e.status = -EMSGSIZE; /* MPI_ERR_TRUNCATE */', 'e.status = 0;'),
 'many': ('mpi/core/match.c', 'wild = x;\n            break;', 'wild = x;'),
 'ringfull': ('host-kmod/o2g/o2g_rx.c', '\tif (!o2g_ring_free(f))\n\t\treturn false;\n\tm = o2g_dump_alloc', '\tm = o2g_dump_alloc'),
 'poll': ('host-kmod/o2g/o2g_main.c', 'return o2g_ring_nonempty(f) ? EPOLLIN | EPOLLRDNORM : 0;', 'return 0;'),
 'corrupt': ('host-kmod/o2g/o2g_rx.c', 'if (mpe_wire_decode(c->hdr, &c->w, f->max_eager)) {', 'if (mpe_wire_decode(c->hdr, &c->w, f->max_eager) && 0) {'),
 'closed': ('host-kmod/o2g/o2g_rx.c', '\t\tc->closed = true;\n\t\to2g_read(c);', '\t\to2g_read(c);'),
 'killed': ('host-kmod/o2g/o2g_main.c', '\t\tif (r->state == REQ_QUEUED)\n\t\t\to2g_stat_add(ST_POSTED, -1);\n\t\to2g_req_free(f, r);', '\t\tif (r->state == REQ_QUEUED)\n\t\t\to2g_stat_add(ST_POSTED, -1);'),
 'memlock': ('host-kmod/o2g/o2g_main.c', 'return npages ? account_locked_vm(f->mm, npages, inc) : 0;', 'return 0;'),
 'double': ('host-kmod/o2g/o2g_main.c', '\tif (sk->sk_user_data) {', '\tif (0) {'),
 'rmmod': ('host-kmod/o2g/o2g_main.c', '.owner = THIS_MODULE,', '.owner = NULL,'),
 'dmesg': ('host-kmod/o2g/o2g_main.c', '\tif (!f)\n\t\treturn -ENOMEM;\n\tspin_lock_init', '\tWARN_ON_ONCE(1);\n\tif (!f)\n\t\treturn -ENOMEM;\n\tspin_lock_init'),
}
# The case that catches a mutant, when it is not the mutant's own name.
CASE = {'poll': 'unexp', 'pieces': 'control'}
# Cases that need another case to run first (dmesg checks what the others logged).
BEFORE = {'dmesg': ['o2g/eager']}


def case_runner(M, before, suite):
    """The run function of a suite's mutant table M: name -> (case, file, text, bug); the
    cases in before[case] run first (a dmesg case checks what the others logged)."""
    def run(name):
        case, path, a, b = M[name]
        return try_mutant(path, a, b, before.get(case, []) + [suite + '/' + case],
                          suite + '/' + case)
    return run


def try_mutant(path, a, b, args, case):
    """Apply one mutant (replace a by b in path), run tests/kmod/run.sh ARGS, restore the
    source whatever happens: (caught, the case's result line)."""
    orig = open(path).read()
    if orig.count(a) != 1:
        return False, 'mutant does not apply (source changed?)'
    open(path, 'w').write(orig.replace(a, b))
    try:
        r = subprocess.run(['tests/kmod/run.sh'] + args, capture_output=True, text=True,
                           timeout=600)
    finally:
        open(path, 'w').write(orig)
    line = next((l for l in r.stdout.splitlines() if l.startswith(('ok ' + case, 'FAIL ' + case))),
                'no result')
    return line.startswith('FAIL'), line


def report(names, run):
    """Run each named mutant, one line each and the closing line; the exit status."""
    caught = missed = 0
    for n in names:
        ok, line = run(n)
        print(('ok mutant %s: caught: %s' if ok else 'FAIL mutant %s: not caught: %s') % (n, line))
        caught += ok
        missed += not ok
    print('%d passed, %d failed' % (caught, missed))
    return 1 if missed else 0


def run(name):
    path, a, b = M[name]
    case = 'o2g/' + CASE.get(name, name)
    return try_mutant(path, a, b, BEFORE.get(name, []) + [case], case)


if __name__ == '__main__':
    sys.exit(report(sys.argv[1:] or list(M), run))
