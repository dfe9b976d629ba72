/*
 * mpe_ops.c: the engine's table of entry points, as the kernel exports it to applications
 * (uk_abi->mpi, mpe.h). Task context of the calling rank, every one.
 *
 * Each call is bracketed by mpe_enter/mpe_leave (mpe_cad.c): while a rank is inside the
 * engine it may hold an engine lock, so an interrupt on its CPU leaves CAD progress to the
 * end of the call instead of waiting for that lock; mpe_leave runs it. Calls that sleep
 * (block, init's wait for HELLOs) sleep outside the bracket, after flushing it.
 */
#include "mpe_internal.h"

static int op_init(void)
{
    return mpe_init();
}

static int op_isend(struct mpe_req *r, const void *buf, size_t len, int dst_world, uint32_t ctx,
                    int src, int tag, int flags)
{
    int me = mpe_enter();
    int rc = mpe_isend(r, buf, len, dst_world, ctx, src, tag, flags);
    mpe_leave(me);
    return rc;
}

static int op_irecv(struct mpe_req *r, void *buf, size_t len, uint32_t ctx, int src, int tag)
{
    int me = mpe_enter();
    int rc = mpe_irecv(r, buf, len, ctx, src, tag);
    mpe_leave(me);
    return rc;
}

static int op_iprobe(uint32_t ctx, int src, int tag, struct mpe_status *st)
{
    int me = mpe_enter();
    int rc = mpe_iprobe(ctx, src, tag, st);
    mpe_leave(me);
    return rc;
}

static int op_cancel(struct mpe_req *r)
{
    int me = mpe_enter();
    int rc = mpe_cancel(r);
    mpe_leave(me);
    return rc;
}

static void op_block(void)
{
    mpe_leave(mpe_enter()); /* progress what was left for this CPU, then sleep */
    mpe_block(mpe_self());
}

static void op_poll(void)
{
    plat_poll();
}

static void op_stats(uint64_t out[MPE_ST_COUNT])
{
    mpe_stats(out);
}

static int op_cad_issue(struct mpe_cad *c)
{
    int me = mpe_enter();
    int rc = mpe_cad_issue(c);
    mpe_leave(me);
    return rc;
}

static int op_cad_test(struct mpe_cad *c)
{
    int me = mpe_enter();
    int rc = mpe_cad_test(c);
    mpe_leave(me);
    return rc;
}

static void op_cad_done(struct mpe_cad *c, int node)
{
    int me = mpe_enter();
    mpe_cad_done(c, node);
    mpe_leave(me);
}

const struct mpe_ops mpe_ops = {
    .size = sizeof(struct mpe_ops),
    .init = op_init,
    .isend = op_isend,
    .irecv = op_irecv,
    .iprobe = op_iprobe,
    .cancel = op_cancel,
    .block = op_block,
    .poll = op_poll,
    .stats = op_stats,
    .cad_bytes = mpe_cad_bytes,
    .cad_issue = op_cad_issue,
    .cad_test = op_cad_test,
    .cad_done = op_cad_done,
    .cad_stats = mpe_cad_stats,
    .cad_latency = mpe_cad_latency,
    .tsc_hz = plat_tsc_hz,
    .clients = mpe_clients,
};
