/* net_node.c: this node's identity from the kernel command line (see uk/net.h). */
#include "net_internal.h"
#include "kernel/bootinfo.h"
#include "uk/console.h"

/* Any context: parse "A.B.C.D" into host byte order; returns -1 if malformed. */
int net_parse_ip(const char *s, uint32_t *out, const char **end)
{
    uint32_t ip = 0;
    for (int i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9')
            return -1;
        uint32_t v = 0;
        while (*s >= '0' && *s <= '9')
            v = v * 10 + (uint32_t)(*s++ - '0');
        if (v > 255 || (i < 3 && *s++ != '.'))
            return -1;
        ip = ip << 8 | v;
    }
    if (end)
        *end = s;
    *out = ip;
    return 0;
}

/* Boot context: fill `n` from the command line. Returns 0 or -1 (printed). */
int net_node_parse(struct net_node *n)
{
    char buf[512];
    n->id = (int)cmdline_get_u64("node", 0);
    n->nodes = (int)cmdline_get_u64("nodes", 1);
    if (n->nodes < 1 || n->nodes > NET_MAX_NODES || n->id < 0 || n->id >= n->nodes) {
        kprintf("net: bad node=%d nodes=%d\n", n->id, n->nodes);
        return -1;
    }
    n->ip = 0x0a000001u + (uint32_t)n->id; /* 10.0.0.(I+1) */
    n->mask = 0xffffff00u;
    if (cmdline_get("ip", buf, sizeof buf) && net_parse_ip(buf, &n->ip, 0) != 0) {
        kprintf("net: bad ip=%s\n", buf);
        return -1;
    }
    if (cmdline_get("mask", buf, sizeof buf) && net_parse_ip(buf, &n->mask, 0) != 0) {
        kprintf("net: bad mask=%s\n", buf);
        return -1;
    }
    /* A node off the hub's subnet (a hosted unikernel behind Linux's ukvnic0, or a VM node
     * reaching one) sends everything else through this router. */
    n->gw = 0;
    if (cmdline_get("gw", buf, sizeof buf) &&
        (net_parse_ip(buf, &n->gw, 0) != 0 || (n->gw & n->mask) != (n->ip & n->mask))) {
        kprintf("net: bad gw=%s (not on the subnet of ip= and mask=)\n", buf);
        return -1;
    }
    for (int j = 0; j < n->nodes; j++)
        n->peer_ip[j] = n->ip - (uint32_t)n->id + (uint32_t)j;
    if (cmdline_get("peers", buf, sizeof buf)) {
        const char *s = buf;
        for (int j = 0; j < n->nodes; j++) {
            if (net_parse_ip(s, &n->peer_ip[j], &s) != 0 || (*s != ',' && *s != 0) ||
                (*s == 0 && j != n->nodes - 1)) {
                kprintf("net: peers= must list %d addresses\n", n->nodes);
                return -1;
            }
            if (*s == ',')
                s++;
        }
    }
    return 0;
}
