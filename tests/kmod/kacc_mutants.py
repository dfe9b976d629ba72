#!/usr/bin/env python3
"""tests/kmod/kacc_mutants.py [MUTANT...]: shows that each kacc guest test fails when the
behaviour it guards breaks (tests/kmod/mutants.py does the same for o2g). For each mutant,
one edit of host-kmod/kacc (or of mpi/linux/mlx_kacc.c, for kacc-mpi's cases) breaks a
behaviour; the case guarding it is run against the mutant (tests/kmod/run.sh kacc/CASE or
kacc-mpi/CASE) and must fail. The source is restored afterwards,
whatever happens. Not part of `make test` (one guest boot and one module build per
mutant, ~20 s each); run it after changing a test or the module.
Prints one line per mutant and "N passed, N failed" (passed: the test caught the mutant).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import case_runner, report  # noqa: E402 (after the path; it also cds to the top)

MAIN = 'host-kmod/kacc/kacc_main.c'
RUN = 'host-kmod/kacc/kacc_run.c'
NET = 'host-kmod/kacc/kacc_net.c'
# mutant: (case, file, text, replacement). The replacement is the bug the case must catch.
M = {
 'novalidate': ('refuse', MAIN, 'ret = cad_validate(gr->g, a.bytes, &cerr);',
                'gr->g->flags |= CAD_F_VALID;\n\tret = 0;'),
 'nopin': ('refuse', MAIN, '\t\tif (ret == -EFAULT)\n\t\t\treturn kacc_refuse(err, CAD_EBUF, i, CAD_CALC',
           '\t\tif (ret == -EFAULT && 0)\n\t\t\treturn kacc_refuse(err, CAD_EBUF, i, CAD_CALC'),
 'x87double': ('calc', 'host-kmod/kacc/Kbuild',
               '-msse -msse2 -m80387\nCFLAGS_REMOVE_cad_calc.o := -mno-sse -mno-mmx -mno-sse2',
               '-msse -m80387\nCFLAGS_REMOVE_cad_calc.o := -mno-sse -mno-mmx'),
 'offset': ('calc', MAIN, '*kaddr = (u64)(uintptr_t)b->map + offset_in_page(addr);',
            '*kaddr = (u64)(uintptr_t)b->map;'),
 'publish': ('status', RUN, '\tsmp_store_release(&s->run, run);',
             '\tif (run < CAD_Q_DONE)\n\t\tsmp_store_release(&s->run, run);'),
 'pollwake': ('status', MAIN, '\t\t\treturn EPOLLIN | EPOLLRDNORM;', '\t\t\treturn 0;'),
 'cancel': ('cancel', RUN, '\tcad_cancel(gr->g);\n\tif (gr->partial >= 0)', '\tif (gr->partial >= 0)'),
 'partial': ('cancel', RUN, '\tif (gr->partial >= 0)\n\t\tcad_complete(gr->g, gr->partial);', ''),
 'noslice': ('calc', RUN, '(64ULL << 10)', '(64ULL << 30)'),
 'nohome': ('ipi', RUN, 'target = policy == KACC_IPI && cpu_online(gr->home) ? gr->home : me;', 'target = me;'),
 'nopoll': ('poll', RUN, '\tif (policy == KACC_POLL)\n\t\treturn;', ''),
 'leak': ('killed', MAIN, '\t\tkacc_settle(f, f->slots[i]);\n\t\tkacc_release_slot(f, i);',
          '\t\tkacc_settle(f, f->slots[i]);'),
 'memlock': ('memlock', MAIN, 'err = account_locked_vm(f->mm, n, true);', 'err = 0;'),
 'owner': ('rmmod', MAIN, '.owner = THIS_MODULE,', '.owner = NULL,'),
 'hook': ('xfer', NET, 'o2g_set_cad_hook(kacc_recv_done);', 'o2g_set_cad_hook(NULL);'),
 'drain': ('xfer', RUN, '\tkacc_xfer_drain(gr); /* SENDs and RECVs completed since the last run */', ''),
 'wirectx': ('xfer', NET, '.ctx = n->u.x.ctx,\n\t\t.src', '.ctx = n->u.x.ctx + 1,\n\t\t.src'),
 'tasklet': ('noprogress', RUN, '\tif (policy == KACC_POLL)\n\t\treturn;', '\treturn;'),
 'settle': ('xkilled', MAIN, '\t\tkacc_settle(f, f->slots[i]);\n', ''),
 'truncate': ('xerror', 'host-kmod/o2g/o2g_rx.c',
              'o2g_kern_done(f, r, !status && w && w->len > r->len ? -EMSGSIZE : status,',
              'o2g_kern_done(f, r, status,'),
 'pieces': ('xerror', NET, '.pages = x->buf ? x->buf->pages + (at >> PAGE_SHIFT) : NULL,',
            '.pages = x->buf ? x->buf->pages : NULL,'),
 'usernode': ('userop', MAIN, 'if (gr->user < 0 || a.node != gr->user) {', 'if (gr->user < 0) {'),
 'shutdown': ('xkilled', MAIN, '\t\tif (ms == KACC_SETTLE_MS)\n\t\t\tkacc_net_shutdown(f);\n', ''),
 'warn': ('dmesg', MAIN, '\tif (!f)\n\t\treturn -ENOMEM;\n\tf->status',
          '\tWARN_ON_ONCE(1);\n\tif (!f)\n\t\treturn -ENOMEM;\n\tf->status'),
 # the security review's findings: each case fails with its fix undone
 'eagerrange': ('eager', 'host-kmod/o2g/o2g_main.c',
                '\tif (s.max_eager < O2G_MIN_EAGER || s.max_eager > O2G_MAX_EAGER)\n\t\treturn -EINVAL;\n', ''),
 'kmemcap': ('kmem', MAIN, '\t\treturn -EDQUOT;\n\tgr = kzalloc', '\t\t;\n\tgr = kzalloc'),
 'progresshold': ('progress0', MAIN, '#define KACC_PROGRESS_HOLD 64', '#define KACC_PROGRESS_HOLD UINT_MAX'),
 'pinshared': ('pinfile', 'host-kmod/o2g/o2g_pin.h', '\t\t\treturn -EOPNOTSUPP;', '\t\t\t;'),
 'abort': ('xclose', MAIN, '\t\t\t\tkacc_net_abort(f);\n', ''),
 'childws': ('listen', NET, '\tcmpxchg(&sk->sk_write_space, kacc_write_space, kacc_default_write_space);\n'
             '\tkacc_default_write_space(sk);\n', ''),
}
# Cases that need another case to run first (dmesg checks what the others logged).
BEFORE = {'dmesg': ['kacc/status']}
# The MPI library's side (tests/kmod/kacc_mpi.sh's cases): the choices that stranded a
# rank before (a refused graph run in the library, the 1 MiB size rule: each case's job
# hangs until guest/mpirun's 90 s timeout), user ops left to the library, a rank asleep
# in MPI_Wait not woken for a user op kacc offers.
KACC = 'mpi/linux/mlx_kacc.c'
MPI = {
 'runrefused': ('refuse', KACC, '    if (npend || try_issue(c, 1) != 0) {\n'
                '        __atomic_store_n(&c->off_slot, MLX_KACC_WAITING, __ATOMIC_RELAXED);\n'
                '        pend_add(c);\n    }',
                '    if (npend || try_issue(c, 1) != 0) {\n        pthread_mutex_unlock(&pend_lock);'
                '\n        return -1;\n    }'),
 'uopinlib': ('uop', KACC, '    for (uint32_t i = 0; i < g->nnodes; i++) {\n        /* Hazard',
              '    for (uint32_t i = 0; i < g->nnodes; i++) {\n'
              '        if (n[i].type == CAD_CALC && n[i].u.c.op == CAD_OP_USER)\n            return 0;\n'
              '        /* Hazard'),
 'nowake': ('uop', KACC, '    if (offered && t)\n        plat_wake(t);', ''),
 'sizerule': ('vbig', KACC, '(n[i].u.x.peer < 0 ||', '(n[i].u.x.bytes > MLX_KACC_EAGER || n[i].u.x.peer < 0 ||'),
}


if __name__ == '__main__':
    kacc, mpi = case_runner(M, BEFORE, 'kacc'), case_runner(MPI, {}, 'kacc-mpi')
    sys.exit(report(sys.argv[1:] or list(M) + list(MPI),
                    lambda n: mpi(n) if n in MPI else kacc(n)))
