// SPDX-License-Identifier: GPL-2.0
/*
 * ukload_vnic.c: ukvnic0, Linux's end of the shared-memory NIC to the hosted unikernel
 * (the rings and their memory order: ukload_shm.h). Registered when a unikernel boots,
 * unregistered at stop, so the rings are only used while their consumer runs.
 *
 * Linux -> unikernel: ndo_start_xmit copies the skb into a to_uk slot (under the netdev's
 * TX lock: the one producer) and, if the unikernel armed its kick, sends UKL_VNIC_VECTOR
 * to its first CPU through the kernel's APIC driver.
 * Unikernel -> Linux: an hrtimer every poll_us (module parameter) schedules NAPI when
 * to_linux has frames, and wakes the TX queue when to_uk has room again. With vnic_ipi=1
 * the unikernel also interrupts Linux: NAPI, done, arms to_linux's kick, and the unikernel
 * sends POSTED_INTR_WAKEUP_VECTOR to vnic_ipi_cpu after publishing (ukload_shm.h); its
 * handler schedules NAPI, and the timer is a backstop (give it a long period). That vector
 * is the only one Linux 6.1 lets a module own (kvm_set_posted_intr_wakeup_handler(), for
 * kvm_intel's posted-interrupt wakeups): a CPU with VMX could load kvm_intel, which would
 * take it, so vnic_ipi is refused there and ukvnic0 polls. NAPI copies each frame into a
 * fresh skb: Linux never holds a pointer into the rings, which the unikernel may rewrite
 * at any time.
 */
#include <linux/etherdevice.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <asm/apic.h>
#include <asm/cpufeature.h>
#include <asm/irq.h>
#include <asm/irq_vectors.h>
#include "ukload.h"
#include "ukload_shm.h"

static unsigned int ukl_poll_us = 100;
module_param_named(vnic_poll_us, ukl_poll_us, uint, 0444);
MODULE_PARM_DESC(vnic_poll_us, "how often ukvnic0 polls the unikernel's ring (us)");

static bool ukl_ipi;
module_param_named(vnic_ipi, ukl_ipi, bool, 0444);
MODULE_PARM_DESC(vnic_ipi, "the unikernel interrupts Linux when it sends (CPUs without VMX)");
static unsigned int ukl_ipi_cpu;
module_param_named(vnic_ipi_cpu, ukl_ipi_cpu, uint, 0444);
MODULE_PARM_DESC(vnic_ipi_cpu, "the Linux CPU the unikernel interrupts (vnic_ipi)");

#define UKL_VNIC_POLL_MIN_US 10
#define UKL_UK_MAC_LAST 1 /* the unikernel's address: 02:75:6b:00:00:01 ("uk") */

struct ukl_vnic_priv {
	struct ukl_vnic *ctl;
	u8 *to_uk, *to_linux; /* the rings' slots */
	u32 tx_prod;	      /* to_uk's producer index: ours, never read back */
	u32 rx_cons;	      /* to_linux's consumer index: ours */
	u32 apicid;	      /* the unikernel's first CPU */
	struct napi_struct napi;
	struct hrtimer timer;
	ktime_t period;
	bool dead; /* the unikernel is being stopped: send nothing (read under the TX lock) */
	bool ipi;  /* the unikernel interrupts us: NAPI arms to_linux's kick */
};

static struct net_device *ukl_ndev;
static struct ukl_vnic_priv *ukl_ipi_priv; /* the IPI handler's device while registered */
static bool ukl_ipi_on; /* this load's rings carry linux_vector (never read back from them) */
static u8 ukl_linux_mac[ETH_ALEN]; /* ours: the ring's copy is the unikernel's to read */

static struct ukl_vnic_slot *ukl_slot(u8 *ring, u32 idx)
{
	return (struct ukl_vnic_slot *)(ring + (idx & (UKL_VNIC_SLOTS - 1)) * UKL_VNIC_SLOT_SIZE);
}

/* ukl_vnic_prepare(): may the unikernel interrupt us (vnic_ipi)? Says why not. */
static bool ukl_ipi_allowed(void)
{
	if (!ukl_ipi)
		return false;
	/* Hazard: one handler for the vector, the kernel's; kvm_intel sets it when it loads
	 * (and only where VMX is) and would take it from us, or we from it.
	 */
	if (boot_cpu_has(X86_FEATURE_VMX)) {
		pr_warn("ukload: vnic_ipi refused: kvm_intel may own the vector (VMX)\n");
		return false;
	}
	if (ukl_ipi_cpu >= nr_cpu_ids || !cpu_online(ukl_ipi_cpu)) {
		pr_warn("ukload: vnic_ipi refused: vnic_ipi_cpu %u is not online; ukvnic0 polls\n",
			ukl_ipi_cpu);
		return false;
	}
	return true;
}

/* ukl_load(), ukl_lock held, no unikernel running: empty rings, the two addresses and
 * whether the unikernel interrupts us.
 */
void ukl_vnic_prepare(const struct ukl_range *r)
{
	struct ukl_vnic *ctl = r->virt + UKL_VNIC_OFF;
	static const u8 uk_mac[UKL_VNIC_MAC_LEN] = { 0x02, 0x75, 0x6b, 0, 0, UKL_UK_MAC_LAST };

	BUILD_BUG_ON(UKL_BOOT_OFF + UKL_BOOT_SIZE > UKL_VNIC_OFF);
	BUILD_BUG_ON(UKL_VNIC_END > UKL_KERNEL_OFF);
	BUILD_BUG_ON(sizeof(struct ukl_vnic) > UKL_VNIC_CTL_SIZE);
	BUILD_BUG_ON(sizeof(struct ukl_vnic_ring) != 2 * UKL_VNIC_LINE);
	BUILD_BUG_ON(offsetof(struct ukl_vnic, to_uk) != UKL_VNIC_LINE);
	BUILD_BUG_ON(sizeof(struct ukl_vnic_slot) != UKL_VNIC_SLOT_SIZE);
	BUILD_BUG_ON(UKL_VNIC_FRAME_MAX + UKL_VNIC_SLOT_HDR > UKL_VNIC_SLOT_SIZE);
	BUILD_BUG_ON(!is_power_of_2(UKL_VNIC_SLOTS));

	memset(ctl, 0, sizeof(*ctl));
	ctl->slots = UKL_VNIC_SLOTS;
	memcpy(ctl->uk_mac, uk_mac, sizeof(uk_mac));
	eth_random_addr(ukl_linux_mac);
	memcpy(ctl->linux_mac, ukl_linux_mac, ETH_ALEN);
	ukl_ipi_on = ukl_ipi_allowed();
	if (ukl_ipi_on) {
		ctl->linux_vector = POSTED_INTR_WAKEUP_VECTOR;
		ctl->linux_apic = cpu_physical_id(ukl_ipi_cpu);
	}
	ctl->magic = UKL_VNIC_MAGIC; /* the start-up IPIs' wmb() orders all this first */
}

/* ndo_start_xmit, BH context: one fixed-vector IPI to the unikernel's first CPU. */
static void ukl_vnic_kick(struct ukl_vnic_priv *p)
{
	unsigned long flags;

	local_irq_save(flags); /* the ICR's two halves are written separately (xAPIC) */
	apic_wait_icr_idle();
	apic_icr_write(APIC_DM_FIXED | APIC_DEST_PHYSICAL | UKL_VNIC_VECTOR, p->apicid);
	local_irq_restore(flags);
}

/* The netdev's TX lock held (BH context): the only producer of to_uk. Frees the skb. */
static netdev_tx_t ukl_vnic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct ukl_vnic_priv *p = netdev_priv(dev);
	struct ukl_vnic_ring *ring = &p->ctl->to_uk;
	struct ukl_vnic_slot *slot;
	u32 cons, used;

	if (READ_ONCE(p->dead) || skb->len < UKL_VNIC_FRAME_MIN || skb->len > UKL_VNIC_FRAME_MAX) {
		dev->stats.tx_dropped++;
		goto out;
	}
	cons = smp_load_acquire(&ring->cons); /* its reads of the slot before our writes */
	used = p->tx_prod - cons;
	if (used > UKL_VNIC_SLOTS) { /* a broken consumer: never trust it with a slot */
		dev->stats.tx_errors++;
		goto out;
	}
	if (used == UKL_VNIC_SLOTS) { /* only if the queue was woken too early */
		netif_stop_queue(dev);
		return NETDEV_TX_BUSY;
	}
	slot = ukl_slot(p->to_uk, p->tx_prod);
	skb_copy_bits(skb, 0, slot->frame, skb->len);
	WRITE_ONCE(slot->len, skb->len);
	p->tx_prod++;
	smp_store_release(&ring->prod, p->tx_prod); /* the frame before the index */
	/* Hazard: store (prod) -> load (kick) needs the full fence (ukload_shm.h). */
	smp_mb();
	if (READ_ONCE(ring->kick))
		ukl_vnic_kick(p);
	if (used + 1 == UKL_VNIC_SLOTS) /* now full: the timer wakes the queue */
		netif_stop_queue(dev);
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += skb->len;
out:
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;
}

/* NAPI poll (softirq): the only consumer of to_linux; at most budget frames. */
static int ukl_vnic_rx(struct ukl_vnic_priv *p, struct net_device *dev, int budget)
{
	struct ukl_vnic_ring *ring = &p->ctl->to_linux;
	u32 prod = smp_load_acquire(&ring->prod); /* the index before its frames */
	struct ukl_vnic_slot *slot;
	struct sk_buff *skb;
	int n = 0;
	u32 len;

	if (prod - p->rx_cons > UKL_VNIC_SLOTS) { /* a broken producer: read nothing */
		dev->stats.rx_fifo_errors++;
		return 0;
	}
	while (p->rx_cons != prod && n < budget) {
		slot = ukl_slot(p->to_linux, p->rx_cons);
		len = READ_ONCE(slot->len); /* checked on this copy, used from it */
		if (len < UKL_VNIC_FRAME_MIN || len > UKL_VNIC_FRAME_MAX) {
			dev->stats.rx_length_errors++;
		} else {
			skb = napi_alloc_skb(&p->napi, len);
			if (!skb) {
				dev->stats.rx_dropped++;
			} else {
				/* Hazard: the bytes may change under the copy; our checked len
				 * alone sizes it (a hostile peer garbles only its own frame).
				 */
				skb_put_data(skb, slot->frame, len);
				skb->protocol = eth_type_trans(skb, dev);
				dev->stats.rx_packets++;
				dev->stats.rx_bytes += len;
				napi_gro_receive(&p->napi, skb);
			}
		}
		p->rx_cons++;
		smp_store_release(&ring->cons, p->rx_cons); /* our copy before the slot's reuse */
		n++;
	}
	return n;
}

/* NAPI poll, softirq context. */
static int ukl_vnic_poll(struct napi_struct *napi, int budget)
{
	struct ukl_vnic_priv *p = container_of(napi, struct ukl_vnic_priv, napi);
	struct ukl_vnic_ring *ring = &p->ctl->to_linux;
	u32 prod;
	int n;

	if (p->ipi)
		WRITE_ONCE(ring->kick, 0); /* draining: no IPIs needed */
	n = ukl_vnic_rx(p, napi->dev, budget);
	if (n < budget && napi_complete_done(napi, n) && p->ipi) {
		WRITE_ONCE(ring->kick, 1);
		/* Hazard: store (kick) -> load (prod) needs the full fence (ukload_shm.h). */
		smp_mb();
		/* it published meanwhile: drain again. Hazard: not for an impossible index
		 * (ukl_vnic_rx() counted it and read nothing): each poll would schedule the
		 * next, a softirq loop for as long as the unikernel keeps it. The timer's next
		 * tick or IPI looks again.
		 */
		prod = READ_ONCE(ring->prod);
		if (prod != p->rx_cons && prod - p->rx_cons <= UKL_VNIC_SLOTS)
			napi_schedule(napi);
	}
	return n;
}

/* POSTED_INTR_WAKEUP_VECTOR's handler, hardirq context on vnic_ipi_cpu: the unikernel
 * published frames while to_linux's kick was armed.
 */
static void ukl_vnic_ipi(void)
{
	struct ukl_vnic_priv *p = READ_ONCE(ukl_ipi_priv);

	if (p)
		napi_schedule(&p->napi); /* nothing while NAPI is disabled (device down) */
}

/* hrtimer, softirq context, while the device is up: the unikernel's "interrupt". */
static enum hrtimer_restart ukl_vnic_tick(struct hrtimer *t)
{
	struct ukl_vnic_priv *p = container_of(t, struct ukl_vnic_priv, timer);
	struct net_device *dev = p->napi.dev;
	u32 cons;

	/* a racy look at rx_cons (NAPI's): at worst one spurious or one late poll.
	 * Hazard: an impossible prod schedules NAPI every period (counted there, nothing read):
	 * bounded work, and the ring works again once the producer is sane.
	 */
	if (READ_ONCE(p->ctl->to_linux.prod) != READ_ONCE(p->rx_cons))
		napi_schedule(&p->napi);
	if (netif_queue_stopped(dev)) {
		/* pairs with the consumer's release, as in ukl_vnic_xmit() */
		cons = smp_load_acquire(&p->ctl->to_uk.cons);
		if (p->tx_prod - cons < UKL_VNIC_SLOTS)
			netif_wake_queue(dev);
	}
	hrtimer_forward_now(t, p->period);
	return HRTIMER_RESTART;
}

/* ndo_open, process context, RTNL held. */
static int ukl_vnic_open(struct net_device *dev)
{
	struct ukl_vnic_priv *p = netdev_priv(dev);

	napi_enable(&p->napi);
	hrtimer_start(&p->timer, p->period, HRTIMER_MODE_REL_SOFT);
	netif_start_queue(dev);
	if (p->ipi)
		napi_schedule(&p->napi); /* its completion arms to_linux's kick */
	return 0;
}

/* ndo_stop, process context, RTNL held (also from unregister_netdev). */
static int ukl_vnic_close(struct net_device *dev)
{
	struct ukl_vnic_priv *p = netdev_priv(dev);

	netif_stop_queue(dev);
	hrtimer_cancel(&p->timer);
	napi_disable(&p->napi);
	WRITE_ONCE(p->ctl->to_linux.kick, 0); /* no IPIs while down */
	return 0;
}

static const struct net_device_ops ukl_vnic_ops = {
	.ndo_open = ukl_vnic_open,
	.ndo_stop = ukl_vnic_close,
	.ndo_start_xmit = ukl_vnic_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ukl_boot(), ukl_lock held, process context, the unikernel started: ukvnic0 appears. */
int ukl_vnic_start(const struct ukl_range *r, u32 apicid)
{
	struct ukl_vnic_priv *p;
	struct net_device *dev;
	int err;

	dev = alloc_netdev(sizeof(*p), "ukvnic%d", NET_NAME_ENUM, ether_setup);
	if (!dev)
		return -ENOMEM;
	p = netdev_priv(dev);
	p->ctl = r->virt + UKL_VNIC_OFF;
	p->to_uk = r->virt + UKL_VNIC_TO_UK_OFF;
	p->to_linux = r->virt + UKL_VNIC_TO_LINUX_OFF;
	p->apicid = apicid;
	p->period = ns_to_ktime((u64)max(ukl_poll_us, UKL_VNIC_POLL_MIN_US) * NSEC_PER_USEC);
	hrtimer_init(&p->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	p->timer.function = ukl_vnic_tick;
	netif_napi_add(dev, &p->napi, ukl_vnic_poll);
	eth_hw_addr_set(dev, ukl_linux_mac);
	dev->netdev_ops = &ukl_vnic_ops;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = UKL_VNIC_FRAME_MAX - ETH_HLEN;
	err = register_netdev(dev);
	if (err) {
		free_netdev(dev);
		return err;
	}
	ukl_ndev = dev;
	if (ukl_ipi_on) {
		p->ipi = true;
		ukl_ipi_priv = p;
		kvm_set_posted_intr_wakeup_handler(ukl_vnic_ipi);
	}
	return 0;
}

/*
 * ukl_stop(), ukl_lock held, process context, before the INITs: no frame or IPI towards
 * the CPUs once this returns (netif_tx_disable() waits for a send in progress, and every
 * later one sees dead under the same lock). Quick, unlike unregistering (RCU grace
 * periods), which ukl_vnic_stop() does after the INITs.
 */
void ukl_vnic_quiesce(void)
{
	struct ukl_vnic_priv *p;

	if (!ukl_ndev)
		return;
	p = netdev_priv(ukl_ndev);
	WRITE_ONCE(p->dead, true);
	netif_tx_disable(ukl_ndev);
}

/* ukl_stop(), ukl_lock held, process context, after the INITs: ukvnic0 goes away. */
void ukl_vnic_stop(void)
{
	if (!ukl_ndev)
		return;
	if (ukl_ipi_priv) {
		/* NULL: back to the kernel's dummy, after an RCU grace period (no handler
		 * still running on a CPU)
		 */
		kvm_set_posted_intr_wakeup_handler(NULL);
		ukl_ipi_priv = NULL;
	}
	unregister_netdev(ukl_ndev); /* closes it: timer and NAPI stopped */
	free_netdev(ukl_ndev);
	ukl_ndev = NULL;
}
