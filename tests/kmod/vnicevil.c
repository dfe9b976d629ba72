/*
 * vnicevil.c: a hostile Linux on ukvnic0's to_uk ring, for the ukload suite's vnicvictim
 * case (tests/kmod/ukload-init; the unikernel's end: tests/uk/vnic_victim.c). Built static
 * for the guest (tests/kmod/ukload.sh). It writes the ring through /dev/mem (the reserved
 * range is not System RAM, so the kernel lets root map it) while ukvnic0 is down, so
 * ukload.ko's own producer never runs: this program is the ring's only producer.
 *
 * Usage: vnicevil PHYS_BASE (ukload.ko's phys_base). Publishes, in slots after the ring's
 * current prod: four impossible lengths (0, 13, 1515, ~0) with a poison marker frame behind
 * each; then holds prod more than a ring ahead for EVIL_HOLD_US; then publishes
 * EVIL_GOOD good marker frames (IPv4/UDP broadcasts to port EVIL_PORT, [seq u32 LE] after
 * the UDP header, seq 1..EVIL_GOOD), vnic_victim.c's format. Exit 0, or 1 (no mapping).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ukload_shm.h"

#define EVIL_PORT      5005
#define EVIL_GOOD      4
#define EVIL_POISON    0xdeadu
#define EVIL_LEN       60 /* a minimum Ethernet frame: headers, seq, padding */
#define EVIL_IP        14
#define EVIL_SEQ       (EVIL_IP + 20 + 8)
#define EVIL_HOLD_US   300000 /* the unikernel's network tick (10 ms) drains the ring */
#define EVIL_SETTLE_US 100000
#define EVIL_MAP       (UKL_VNIC_CTL_SIZE + UKL_VNIC_RING_SIZE) /* struct ukl_vnic and to_uk */

static const uint32_t evil_lens[] = {0, UKL_VNIC_FRAME_MIN - 1, UKL_VNIC_FRAME_MAX + 1,
                                     0xffffffffu};

/* The Internet checksum of n bytes (n even). */
static uint16_t csum(const uint8_t *p, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* A marker frame with seq into f (EVIL_LEN bytes). */
static void marker(uint8_t *f, uint32_t seq)
{
    memset(f, 0, EVIL_LEN);
    memset(f, 0xff, 6);        /* broadcast: no address to learn */
    f[6] = 0x02, f[11] = 0xee; /* a locally administered source */
    f[12] = 0x08;              /* IPv4 */
    uint8_t *ip = f + EVIL_IP;
    ip[0] = 0x45;
    ip[3] = EVIL_LEN - EVIL_IP; /* total length */
    ip[8] = 64;                 /* TTL */
    ip[9] = 17;                 /* UDP */
    ip[12] = 10, ip[15] = 1;    /* 10.0.0.1 -> 255.255.255.255 */
    memset(ip + 16, 0xff, 4);
    uint16_t c = csum(ip, 20);
    ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
    uint8_t *udp = ip + 20;
    udp[0] = udp[2] = EVIL_PORT >> 8, udp[1] = udp[3] = EVIL_PORT & 255;
    udp[5] = EVIL_LEN - EVIL_IP - 20; /* UDP length; checksum 0: none */
    memcpy(f + EVIL_SEQ, &seq, 4);
}

/* Slot idx of the to_uk ring at ring. */
static struct ukl_vnic_slot *slot(uint8_t *ring, uint32_t idx)
{
    return (struct ukl_vnic_slot *)(ring + (idx & (UKL_VNIC_SLOTS - 1)) * UKL_VNIC_SLOT_SIZE);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vnicevil PHYS_BASE\n");
        return 2;
    }
    off_t base = (off_t)strtoull(argv[1], 0, 0) + UKL_VNIC_OFF;
    /* Hazard: no O_SYNC. It would ask for an uncached mapping, which PAT refuses beside
     * ukload.ko's write-back memremap() of the same range (and the two must agree). */
    int fd = open("/dev/mem", O_RDWR);
    uint8_t *m =
        fd < 0 ? MAP_FAILED : mmap(0, EVIL_MAP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
    if (m == MAP_FAILED) {
        perror("vnicevil: /dev/mem");
        return 1;
    }
    struct ukl_vnic *c = (struct ukl_vnic *)m;
    uint8_t *ring = m + UKL_VNIC_CTL_SIZE;
    if (c->magic != UKL_VNIC_MAGIC) {
        fprintf(stderr, "vnicevil: no rings at %#llx\n", (unsigned long long)base);
        return 1;
    }
    uint32_t p = __atomic_load_n(&c->to_uk.prod, __ATOMIC_RELAXED); /* ours from now on */
    unsigned nbad = sizeof evil_lens / sizeof evil_lens[0];
    for (unsigned i = 0; i < nbad; i++, p++) {
        marker(slot(ring, p)->frame, EVIL_POISON);
        slot(ring, p)->len = evil_lens[i];
    }
    __atomic_store_n(&c->to_uk.prod, p, __ATOMIC_RELEASE);
    usleep(EVIL_SETTLE_US);
    __atomic_store_n(&c->to_uk.prod, p + UKL_VNIC_SLOTS + 1, __ATOMIC_RELEASE);
    usleep(EVIL_HOLD_US);
    for (uint32_t seq = 1; seq <= EVIL_GOOD; seq++, p++) {
        marker(slot(ring, p)->frame, seq);
        slot(ring, p)->len = EVIL_LEN;
    }
    __atomic_store_n(&c->to_uk.prod, p, __ATOMIC_RELEASE);
    printf("vnicevil: %u impossible lengths, a producer index a ring ahead, %d good frames\n", nbad,
           EVIL_GOOD);
    return 0;
}
