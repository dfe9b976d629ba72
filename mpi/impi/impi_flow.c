/*
 * impi_flow.c: per-(src proc, dest proc) flow-control accounting (spec §8). Freestanding.
 * The sender stops at hiwater unacknowledged packets; the receiver sends a PROTOACK every
 * ackmark packets; each PROTOACK returns ackmark credits. PROTOACK and FINI never count.
 */
#include "impi_wire.h"

/* Any context: see impi_wire.h. */
int impi_flow_cfg_check(const struct impi_flow_cfg *c)
{
    return (c->ackmark >= 1 && c->ackmark <= c->hiwater) ? IMPI_OK : IMPI_E_BAD_VALUE;
}

/* Any context: see impi_wire.h. */
bool impi_flow_counts(uint32_t type)
{
    /* LAM counts DATA, DATASYNC, SYNCACK and the cancel packets (spec §8). */
    return type < IMPI_PK_NTYPES && type != IMPI_PK_PROTOACK && type != IMPI_PK_FINI;
}

/* Any context: see impi_wire.h. */
bool impi_flow_can_send(const struct impi_flow_cfg *c, const struct impi_flow_tx *tx)
{
    return tx->unacked < c->hiwater;
}

/* Any context: see impi_wire.h. */
int impi_flow_sent(const struct impi_flow_cfg *c, struct impi_flow_tx *tx, uint32_t type)
{
    if (!impi_flow_counts(type))
        return IMPI_OK;
    if (tx->unacked >= c->hiwater)
        return IMPI_E_FLOW;
    tx->unacked++;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_flow_acked(const struct impi_flow_cfg *c, struct impi_flow_tx *tx)
{
    /* A PROTOACK acknowledges exactly ackmark packets; one for packets never sent means
     * the peer's accounting (or a relay's routing of PROTOACKs) is broken. */
    if (tx->unacked < c->ackmark)
        return IMPI_E_FLOW;
    tx->unacked -= c->ackmark;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_flow_received(const struct impi_flow_cfg *c, struct impi_flow_rx *rx, uint32_t type,
                       bool *ack_due)
{
    *ack_due = false;
    if (!impi_flow_counts(type))
        return type < IMPI_PK_NTYPES ? IMPI_OK : IMPI_E_BAD_TYPE;
    if (++rx->count >= c->ackmark) {
        rx->count -= c->ackmark;
        *ack_due = true;
    }
    return IMPI_OK;
}
