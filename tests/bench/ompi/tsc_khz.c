/*
 * tsc_khz.c: prints this host's TSC rate in kHz (0 if it cannot tell), measured against
 * CLOCK_MONOTONIC over 100 ms, the smallest of 3 tries. Under QEMU/TCG on an x86 host a guest's TSC runs at the
 * host's rate, and a Linux guest that calibrates it itself against the emulated PIT can be
 * off by a factor of 4 on a busy host (every clock in the guest is then wrong): ompi/run.sh
 * passes this value as tsc_early_khz=, and the guest refines it against its HPET.
 */
#include <stdio.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(void)
{
#if defined(__x86_64__) || defined(__i386__)
    double best = 0;
    for (int r = 0; r < 3; r++) { /* a preemption between the two clock reads at either end
                                     only adds TSC ticks: the smallest rate is the truest */
        unsigned long long t0 = __builtin_ia32_rdtsc();
        double u0 = now_us(), u1;
        while ((u1 = now_us()) - u0 < 100000)
            ;
        double khz = (__builtin_ia32_rdtsc() - t0) / (u1 - u0) * 1e3;
        best = best == 0 || khz < best ? khz : best;
    }
    printf("%.0f\n", best);
#else
    printf("0\n");
#endif
    return 0;
}
