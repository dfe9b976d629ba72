#!/usr/bin/env python3
"""tests/kmod/ukload_mutants.py [MUTANT...]: shows that each ukload guest test fails when the
behaviour it guards breaks (tests/kmod/mutants.py does the same for o2g). For each mutant,
one edit of host-kmod/ukload or boards/hosted breaks a behaviour; the case guarding it is
run against the mutant (tests/kmod/run.sh ukload/CASE) and must fail. The source is
restored afterwards, whatever happens. Not part of `make test` (one guest boot and one
build per mutant, 20-90 s each: nosipi and bss wait out the console's 60 s limit).
The vnic mutants: a byte of every full-size frame Linux sends flipped (TCP's checksum drops
them: the transfer stalls), the unikernel reading the slot after the published one, no
IPI to the unikernel (its 10 ms network tick drains the ring: slow round trips), and
ukvnic0 left registered at stop; the unikernel sending no IPI to Linux under vnic_ipi, or
Linux's NAPI never arming to_linux's kick (vnicipi: replies wait for the backstop poll, no
IPIs counted). The MPI mutants: that frame corruption under the mpi case
(the job stalls: both sides' 60 s limits end it, FAIL with the unikernel's exit 124), and a
unikernel that accepts any node's connection (mpibad: the stranger is not reported).
The vnichostile mutants each drop one of Linux's checks on
what the unikernel writes: a frame's length above the maximum, the producer index, the
consumer index, and (vnicrepoll) NAPI under vnic_ipi rescheduling itself on an impossible
producer index (a softirq loop while the unikernel holds it).
The range mutants accept any resource (System RAM, persistent memory) or a range with no
resource; the perm mutants drop the capability checks of LOAD/BOOT and of STOP (an
unprivileged user with the device's mode opened up); lockdown drops the lockdown check.
The vnicvictim mutants drop the unikernel's checks on what Linux writes: the length above
the maximum, the producer index.
The route mutants: Linux not forwarding (ip_forward=0 in the guest), and lwIP without the
gateway of gw= (both hosted and VM node): the hosted rank cannot connect to the VM node and
says so after its 60 s connect deadline (no hang).
Prints one line per mutant and "N passed, N failed" (passed: the test caught the mutant).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import case_runner, report  # noqa: E402 (after the path; it also cds to the top)

MAIN = 'host-kmod/ukload/ukload_main.c'
ELF = 'host-kmod/ukload/ukload_elf.c'
BOOT = 'host-kmod/ukload/ukload_boot.c'
HOSTED = 'boards/hosted/hosted.c'
LAPIC = 'unikernel/arch/x86_64/lapic.c'
TOOL = 'host-kmod/ukload/ukload_tool.c'
VNIC = 'host-kmod/ukload/ukload_vnic.c'
# Linux flips the last byte of every full-size frame it sends (TCP's checksum drops them)
FLIP_FULL_FRAME = ('\tWRITE_ONCE(slot->len, skb->len);',
                   '\tif (skb->len == UKL_VNIC_FRAME_MAX)\n\t\tslot->frame[skb->len - 1] ^= 1;\n'
                   '\tWRITE_ONCE(slot->len, skb->len);')
UKVNIC = 'unikernel/drivers/ukvnic.c'
MPEUK = 'unikernel/mpi/mpe_uk.c'
# mutant: (case, file, text, replacement). The replacement is the bug the case must catch.
M = {
 'ramcheck': ('range', MAIN,
              'if (res->desc != IORES_DESC_RESERVED || (res->flags & IORESOURCE_SYSRAM)) {',
              'if (0) {'),
 'gapcheck': ('range', MAIN, 'if (res->start > c->next) {', 'if (0) {'),
 'capload': ('perm', MAIN, 'if (!capable(CAP_SYS_ADMIN) || !capable(CAP_SYS_RAWIO))', 'if (0)'),
 'capstop': ('perm', MAIN, 'return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;', 'return 0;'),
 'lockdown': ('lockdown', MAIN, 'return security_locked_down(LOCKDOWN_KEXEC);', 'return 0;'),
 'segcheck': ('badelf', ELF, '|| ph[i].p_paddr < lo ||\n\t\t    end > hi) {', ') {'),
 'magic': ('badelf', ELF, '|| memcmp(eh->e_ident, ELFMAG, SELFMAG)) {', ') {'),
 'nosipi': ('cycles', BOOT, 'for (i = 0; i < UKL_SIPI_TRIES; i++) {', 'for (i = 0; i < 0; i++) {'),
 'bss': ('cycles', ELF, '\t\tmemset(dst + ph[i].p_filesz, 0, ph[i].p_memsz - ph[i].p_filesz);\n',
         ''),
 'exitword': ('exitcode', HOSTED, 's->exit_code = (uint32_t)code;', 's->exit_code = 0;'),
 'timeout': ('hang', TOOL, 'return EXIT_TIMEOUT;', 'return 0;'),
 'apicids': ('smp', HOSTED, 'if (!cmdline_get("apic_ids", list, sizeof list))',
             'if (1)'),
 'smpmap': ('smp', BOOT, 'si->memmap_entries = 2;',
             'si->memmap_entries = 1;\n\tsi->memmap_paddr += sizeof(*mm);'),
 'broadcast': ('isolation', LAPIC, '    send_each(vector, 1);',
               '    ops->send(0, (uint32_t)vector | ICR_ASSERT | ICR_DEST_ALL);'),
 'noinitrd': ('job', BOOT, 'si->nr_modules = 1;', 'si->nr_modules = 0;'),
 'initrdoff': ('job', BOOT, 'mod->paddr = initrd->phys;',
               'mod->paddr = initrd->phys + PAGE_SIZE;'),
 'nostop': ('stop', BOOT, '\t\t\tukl_init(apic->cpu_present_to_apicid(cpu));\n}', '\t\t\t;\n}'),
 'modref': ('rmmod', MAIN, '\t__module_get(THIS_MODULE);', '\t;'),
 'hotplug': ('rmmod', MAIN, '!(READ_ONCE(ukl_busy) & BIT_ULL(cpu)))', '1)'),
 'vnicbyte': ('vnic', VNIC) + FLIP_FULL_FRAME,
 'vnicslot': ('vnic', UKVNIC, 'ukv_rx_one(ukv_slot(ukv_to_uk, ukv_rx_cons), fn, arg);',
              'ukv_rx_one(ukv_slot(ukv_to_uk, ukv_rx_cons + 1), fn, arg);'),
 'vnickick': ('vnic', VNIC, '\tif (READ_ONCE(ring->kick))\n\t\tukl_vnic_kick(p);', ''),
 'vnicunreg': ('vnic', MAIN, '\tukl_vnic_stop();\n', ''),
 'vnicipi': ('vnicipi', UKVNIC, 'lapic_send_ipi(ukv_linux_apic, (int)ukv_linux_vector);', ';'),
 'vnicarm': ('vnicipi', VNIC, '\t\tWRITE_ONCE(ring->kick, 1);\n', ''),
 'mpivnic': ('mpi', VNIC) + FLIP_FULL_FRAME,
 'mpipeer': ('mpibad', MPEUK, 'if (nn->peer_ip[p] == ip && !mpe_conn_transport(c)) {',
             'if (!mpe_conn_transport(c)) {'),
 'vnicrxlen': ('vnichostile', VNIC,
               'if (len < UKL_VNIC_FRAME_MIN || len > UKL_VNIC_FRAME_MAX) {',
               'if (len < UKL_VNIC_FRAME_MIN) {'),
 'vnicrxprod': ('vnichostile', VNIC, 'if (prod - p->rx_cons > UKL_VNIC_SLOTS) {', 'if (0) {'),
 'vnictxcons': ('vnichostile', VNIC, 'if (used > UKL_VNIC_SLOTS) {', 'if (0) {'),
 'vnicrepoll': ('vnichostile', VNIC, 'if (prod != p->rx_cons && prod - p->rx_cons <= UKL_VNIC_SLOTS)',
                'if (prod != p->rx_cons)'),
 'ukrxlen': ('vnicvictim', UKVNIC, '    else if (len > UKL_VNIC_FRAME_MAX)\n        v = VNET_DROP_OVERSIZE;\n',
             ''),
 'ukrxprod': ('vnicvictim', UKVNIC, 'if (prod - ukv_rx_cons > UKL_VNIC_SLOTS) {', 'if (0) {'),
 'noforward': ('route', 'tests/kmod/ukload-init', 'echo 1 >/proc/sys/net/ipv4/ip_forward',
               'echo 0 >/proc/sys/net/ipv4/ip_forward'),
 'nogw': ('route', 'net/uknet/netif_vnet.c', 'ip4_addr_set_u32(&gw, lwip_htonl(net_self.gw));',
          'ip4_addr_set_zero(&gw);'),
 'warn': ('dmesg', MAIN, '\tukl_state = UKLOAD_IDLE;\n\tpr_info',
          '\tukl_state = UKLOAD_IDLE;\n\tWARN_ON_ONCE(1);\n\tpr_info'),
}
# Cases that need another case to run first (dmesg checks what the others logged).
BEFORE = {'dmesg': ['ukload/cycles']}


if __name__ == '__main__':
    sys.exit(report(sys.argv[1:] or list(M), case_runner(M, BEFORE, 'ukload')))
