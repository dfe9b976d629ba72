/*
 * net_prof.c: see uk/net_prof.h. One node's marks; the cycle state is global, not per CPU:
 * the path it measures crosses CPUs only when the rank is not on the NIC's CPU, and the
 * marks are then still in order in time.
 */
#include "uk/net_prof.h"
#if NET_PROF
#include "uk/console.h"
#include "uk/time.h"

#define NP_SAMPLES 4096

static const char *const np_names[NP_STEPS] = {
    "irq_entry", "ack_lock", "virtq_rx", "lwip_in_tcp", "cr3_enter", "match_complete", "wake_rest",
    "irq_tail",  "resume",   "mpi_send", "lwip_out",    "tx_copy",   "tx_notify",
};
static uint64_t np_last;
static int np_at = -1; /* last step marked in this cycle, -1: none */
static uint32_t np_cyc[NP_STEPS][NP_SAMPLES];
static uint64_t np_sum[NP_STEPS], np_n;

/* Any context. Unlocked: only the marks of one message's path race, and a torn cycle
 * only costs a sample. */
void net_prof_mark(enum net_prof_step s, uint64_t tsc)
{
    uint64_t t = s == NP_IRQ ? tsc : rdtsc();
    if (s == NP_IRQ) {
        np_at = 0;
        np_last = t;
        return;
    }
    if (np_at != (int)s - 1) /* not on this cycle's path (an ACK, a timer): ignored */
        return;
    np_cyc[s][np_n % NP_SAMPLES] = (uint32_t)(t - np_last);
    np_last = t;
    np_at = s;
    if (s == NP_STEPS - 1) { /* a whole cycle: keep it */
        for (int i = 1; i < NP_STEPS; i++)
            np_sum[i] += np_cyc[i][np_n % NP_SAMPLES];
        np_n++;
        np_at = -1;
    }
}

/* Task context: cycles to nanoseconds. */
static uint64_t np_ns(uint64_t c)
{
    return c * 1000000000ull / tsc_hz;
}

/* Task context (job end). Sorts each step's samples in place. */
void net_prof_print(int node)
{
    uint64_t n = np_n < NP_SAMPLES ? np_n : NP_SAMPLES, total = 0, med_total = 0;
    for (int s = 1; s < NP_STEPS; s++)
        total += np_sum[s];
    kprintf("netprof: node %d cycles %lu\n", node, np_n);
    for (int s = 1; s < NP_STEPS && n; s++) {
        uint32_t *v = np_cyc[s];
        for (uint64_t i = 1; i < n; i++) { /* insertion sort: n <= 4096, once */
            uint32_t x = v[i];
            uint64_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        uint64_t med = np_ns(v[n / 2]), mean = np_ns(np_sum[s] / np_n);
        med_total += med;
        kprintf("netprof: %-14s median_us %lu.%02lu mean_us %lu.%02lu share %lu%%\n", np_names[s],
                med / 1000, med % 1000 / 10, mean / 1000, mean % 1000 / 10,
                total ? np_sum[s] * 100 / total : 0);
    }
    kprintf("netprof: sum_of_medians_us %lu.%02lu\n", med_total / 1000, med_total % 1000 / 10);
}
#endif
