/*
 * trap.c: the report a CPU exception produces, then the end of the job.
 *
 * A fault in ring 0 is never survivable here (kernel and application share one protection
 * domain, docs/architecture.md §3.1): we print what happened, where, the registers and a
 * backtrace, and exit with EXIT_FAULT. Printing must work even on a broken stack (page
 * faults and double faults arrive on their own IST stacks) and must not recurse: a second
 * fault while reporting prints one line and exits at once.
 */
#include "arch/x86_64/trap.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/x86.h"
#include "kernel/ksyms.h"
#include "kernel/vmm.h"
#include "uk/console.h"
#include "uk/power.h"
#include "memlayout.h"

static const char *const exc_names[VEC_EXCEPTIONS] = {
    "divide error",
    "debug",
    "NMI",
    "breakpoint",
    "overflow",
    "bound range exceeded",
    "invalid opcode",
    "device not available",
    "double fault",
    "coprocessor overrun",
    "invalid TSS",
    "segment not present",
    "stack-segment fault",
    "general protection fault",
    "page fault",
    "reserved",
    "x87 floating-point error",
    "alignment check",
    "machine check",
    "SIMD floating-point error",
    "virtualization exception",
    "control protection",
};

extern volatile int console_panic_cpu;
int (*fault_task_hook)(const struct trapframe *tf, uint64_t cr2);

static void print_sym(const char *prefix, uint64_t addr)
{
    uint64_t off;
    const char *name = ksyms_lookup(addr, &off);
    if (name)
        kprintf("%s0x%016lx <%s+0x%lx>\n", prefix, addr, name, off);
    else
        kprintf("%s0x%016lx\n", prefix, addr);
}

/* Explain a page-fault address: which region it is in, and whether it is a guard page. */
static void explain_address(uint64_t cr2)
{
    if (cr2 < PAGE_SIZE) {
        kprintf("    cause: NULL pointer dereference (address 0x%lx)\n", cr2);
        return;
    }
    if (cr2 >= KSTACK_BASE && cr2 < KSTACK_BASE + (uint64_t)KSTACK_SLOTS * KSTACK_SLOT) {
        uint64_t slot = (cr2 - KSTACK_BASE) / KSTACK_SLOT;
        uint64_t in = (cr2 - KSTACK_BASE) % KSTACK_SLOT;
        if (in < PAGE_SIZE)
            kprintf("    cause: guard page of kernel stack %lu (stack overflow)\n", slot);
        else
            kprintf("    cause: kernel stack %lu\n", slot);
        return;
    }
    if (cr2 < DIRECT_MAP_BASE)
        kprintf("    cause: unmapped user-half address 0x%lx\n", cr2);
    else
        kprintf("    cause: unmapped kernel address 0x%lx\n", cr2);
}

/* Has the function containing `rip` already pushed its frame (push %rbp; mov %rsp,%rbp)?
 * If not (a leaf without a frame, or a fault in the first instructions), its return address
 * is still on top of the stack and the frame chain would skip its caller. */
static int frame_set_up(uint64_t rip)
{
    uint64_t off;
    if (!ksyms_lookup(rip, &off))
        return 1;
    return frame_prologue_at((const uint8_t *)(rip - off)) && off >= FRAME_PROLOGUE_LEN;
}

/* Follow the frame-pointer chain while every frame is a mapped, aligned kernel address. */
static void backtrace(const struct trapframe *tf)
{
    uint64_t rbp = tf->rbp;
    int depth = 0;
    kprintf("backtrace:\n");
    if (!frame_set_up(tf->rip) && vmm_is_mapped(tf->rsp) && !(tf->rsp & 7)) {
        uint64_t ret = *(const uint64_t *)tf->rsp;
        uint64_t off;
        if (ksyms_lookup(ret, &off)) {
            print_sym("  #00 ", ret);
            depth = 1;
        }
    }
    for (; depth < 24 && rbp; depth++) {
        if ((rbp & 7) || rbp < DIRECT_MAP_BASE || !vmm_is_mapped(rbp) || !vmm_is_mapped(rbp + 15))
            break;
        uint64_t ret = ((uint64_t *)rbp)[1];
        if (!ret)
            break;
        char prefix[16] = "  #xx ";
        prefix[3] = (char)('0' + depth / 10);
        prefix[4] = (char)('0' + depth % 10);
        print_sym(prefix, ret);
        rbp = ((uint64_t *)rbp)[0];
    }
}

/* Any context. `why` overrides the exception name (NULL: use the vector's name). */
void fault_report(struct trapframe *tf, const char *why)
{
    struct percpu *p = this_cpu();
    /* One report per machine: a CPU that faults while another reports waits to be
     * stopped (the report ends the job anyway), so two reports never interleave. */
    static volatile int owner = -1;
    int expected = -1;
    if (!__atomic_compare_exchange_n(&owner, &expected, p->id, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE) &&
        expected != p->id) {
        for (;;)
            __asm__ volatile("cli; hlt");
    }
    if (p->fault_depth++ > 0) {
        kprintf("\n*** cpu %d: fault (vector %lu, rip 0x%lx) while reporting a fault\n", p->id,
                tf->vector, tf->rip);
        machine_exit(EXIT_FAULT);
    }
    machine_stop_others();     /* they might hold the console lock: hence the bypass */
    console_panic_cpu = p->id; /* from now on this CPU prints without the console lock */
    uint64_t v = tf->vector;
    const char *name = why;
    if (!name)
        name = v < VEC_EXCEPTIONS && exc_names[v] ? exc_names[v] : "exception";
    kprintf("\n*** FAULT on cpu %d: %s (vector %lu, error 0x%lx)\n", p->id, name, v, tf->error);
    print_sym("    rip ", tf->rip);
    if (v == VEC_PAGE_FAULT) {
        uint64_t cr2 = read_cr2();
        kprintf("    address (cr2) 0x%016lx, %s, %s, %s\n", cr2,
                tf->error & PF_ERR_WRITE ? "write" : "read",
                tf->error & PF_ERR_PRESENT ? "protection violation" : "not present",
                tf->error & PF_ERR_FETCH ? "instruction fetch" : "data");
        if (!fault_task_hook || !fault_task_hook(tf, cr2))
            explain_address(cr2);
    } else if (fault_task_hook) {
        fault_task_hook(tf, 0);
    }
    kprintf("    rax %016lx rbx %016lx rcx %016lx rdx %016lx\n", tf->rax, tf->rbx, tf->rcx,
            tf->rdx);
    kprintf("    rsi %016lx rdi %016lx rbp %016lx rsp %016lx\n", tf->rsi, tf->rdi, tf->rbp,
            tf->rsp);
    kprintf("    r8  %016lx r9  %016lx r10 %016lx r11 %016lx\n", tf->r8, tf->r9, tf->r10, tf->r11);
    kprintf("    r12 %016lx r13 %016lx r14 %016lx r15 %016lx\n", tf->r12, tf->r13, tf->r14,
            tf->r15);
    kprintf("    cs %lx ss %lx rflags %016lx cr3 %016lx\n", tf->cs, tf->ss, tf->rflags, read_cr3());
    backtrace(tf);
    kprintf("*** job aborted (exit code %d)\n", EXIT_FAULT);
    machine_exit(EXIT_FAULT);
}
