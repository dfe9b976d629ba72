/*
 * tsc.c: the TSC as the kernel's clock. Calibrated once against the PIT (channel 2, gate
 * polled through port 0x61, no interrupt needed), best of a few 10 ms windows: under TCG a
 * window can be stretched by host scheduling, and the shortest TSC delta for the same PIT
 * interval is the least disturbed. Wall-clock time comes from the CMOS RTC read at boot.
 */
#include "uk/time.h"
#include "arch/x86_64/io.h"

uint64_t tsc_hz;
static uint64_t tsc_boot, epoch_boot_ns;

#define PIT_HZ 1193182

static uint64_t pit_window(uint32_t ticks)
{
    outb(0x61, (inb(0x61) & ~0x02) | 0x01); /* gate on, speaker off */
    outb(0x43, 0xb0);                       /* channel 2, lobyte/hibyte, mode 0 */
    outb(0x42, ticks & 0xff);
    outb(0x42, (ticks >> 8) & 0xff);
    inb(0x61);
    uint64_t t0 = rdtsc();
    for (uint32_t guard = 0; !(inb(0x61) & 0x20) && guard < 100000000; guard++)
        ;
    return rdtsc() - t0;
}

static int cmos(int reg)
{
    outb(0x70, (uint8_t)reg);
    return inb(0x71);
}

static int bcd(int v, int is_bcd)
{
    return is_bcd ? (v & 15) + (v >> 4) * 10 : v;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static uint64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int era = (y >= 0 ? y : y - 399) / 400;
    int yoe = y - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (uint64_t)(era * 146097 + doe - 719468);
}

static void rtc_read(void)
{
    while (cmos(0x0a) & 0x80) /* update in progress */
        ;
    int is_bcd = !(cmos(0x0b) & 4);
    int s = bcd(cmos(0), is_bcd), mi = bcd(cmos(2), is_bcd), h = bcd(cmos(4) & 0x7f, is_bcd);
    int d = bcd(cmos(7), is_bcd), mo = bcd(cmos(8), is_bcd), y = bcd(cmos(9), is_bcd) + 2000;
    if (!(cmos(0x0b) & 2) && (cmos(4) & 0x80)) /* 12-hour clock, PM */
        h = (h % 12) + 12;
    epoch_boot_ns = ((days_from_civil(y, mo, d) * 86400) + (uint64_t)h * 3600 + (uint64_t)mi * 60 +
                     (uint64_t)s) *
                    1000000000ULL;
}

/* Boot only (BSP), interrupts off. */
void tsc_calibrate(void)
{
    uint64_t best = ~0ULL;
    for (int i = 0; i < 5; i++) {
        uint64_t d = pit_window(PIT_HZ / 100); /* 10 ms */
        if (d < best)
            best = d;
    }
    tsc_hz = best * 100;
    tsc_boot = rdtsc();
    rtc_read();
}

/* Boot only (BSP), instead of tsc_calibrate() where the PIT and the CMOS clock are not
 * ours (boards/hosted): the rate and the time of day as the loader measured them. */
void tsc_set(uint64_t hz, uint64_t epoch_ns)
{
    tsc_hz = hz;
    tsc_boot = rdtsc();
    epoch_boot_ns = epoch_ns;
}

/* Any context. 128-bit intermediate: no overflow for centuries at any TSC rate. */
uint64_t time_ns(void)
{
    if (!tsc_hz)
        return 0;
    return (uint64_t)((unsigned __int128)(rdtsc() - tsc_boot) * 1000000000u / tsc_hz);
}

uint64_t time_realtime_ns(void)
{
    return epoch_boot_ns + time_ns();
}

/* Any context. */
void udelay(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_hz / 1000000;
    while (rdtsc() < end)
        __asm__ volatile("pause");
}
