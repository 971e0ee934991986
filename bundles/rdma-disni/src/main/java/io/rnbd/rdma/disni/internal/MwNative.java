package io.rnbd.rdma.disni.internal;

/**
 * Type-1 memory windows (libdisni.so's extension natives, bound with {@link CmNative}'s):
 * always_invalidate's remote keys. A window over a chunk's registration is killed by a
 * zero-length bind and given a new key by a bind over the whole chunk, each a work request
 * on a queue pair's send queue ({@link SendChain#bind}), as Linux's server posts IB_WR_LOCAL_INV and IB_WR_REG_MR;
 * re-registering the chunk instead took an ibv_dereg_mr and an ibv_reg_mr per request, its
 * pages unpinned and pinned again each time.
 */
final class MwNative {
    /** IBV_ACCESS_MW_BIND: a registration windows may be bound to. */
    static final int ACCESS_MW_BIND = 1 << 4;

    private MwNative() {
    }

    /** ibv_alloc_mw(pd, IBV_MW_TYPE_1): the window, or -errno (EOPNOTSUPP: the adapter has none). */
    static native long alloc(long pd);

    /** ibv_dealloc_mw; 0 or an errno. */
    static native int dealloc(long mw);

    /** The window's current rkey, which its next bind increments (ibv_inc_rkey); binds are {@link SendChain}'s. */
    static native int rkey(long mw);
}
