package io.rnbd.rdma.api;


import java.nio.ByteBuffer;
import java.util.List;

/** Receive buffers of one connection: {@code count} slots of {@code slotSize} in one region. */
public final class RecvPool implements AutoCloseable {
    /** Receive wr ids carry this bit so completions tell them from sends at a glance. */
    public static final long RECV_TAG = 1L << 62;
    private final MemoryRegion mr;
    private final int slotSize;
    private final int count;

    public RecvPool(ProtectionDomain pd, int count, int slotSize) throws RdmaException {
        this.slotSize = slotSize;
        this.count = count;
        this.mr = slotSize == 0 ? null
                : pd.register(ByteBuffer.allocateDirect(count * slotSize), Access.of(Access.LOCAL_WRITE));
    }

    public void postAll(QueuePair qp) throws RdmaException {
        for (int i = 0; i < count; i++) {
            post(qp, i);
        }
    }

    public void post(QueuePair qp, int slot) throws RdmaException {
        List<Sge> sgl = mr == null ? List.of() : List.of(new Sge(mr, slot * slotSize, slotSize));
        qp.postRecv(new RecvWr(RECV_TAG | slot, sgl));
    }

    public static boolean isRecv(long wrId) {
        return (wrId & RECV_TAG) != 0;
    }

    public static int slot(long wrId) {
        return (int) (wrId & ~RECV_TAG);
    }

    /** The received bytes of {@code slot}, a little-endian-agnostic view of length {@code len}. */
    public ByteBuffer data(int slot, int len) {
        if (mr == null) {
            return ByteBuffer.allocate(0);
        }
        return mr.buffer().slice(slot * slotSize, Math.min(len, slotSize));
    }

    @Override
    public void close() {
        if (mr != null) {
            mr.close();
        }
    }
}
