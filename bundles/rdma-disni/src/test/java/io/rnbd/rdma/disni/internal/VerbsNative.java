package io.rnbd.rdma.disni.internal;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.impl.NatIbvMr;
import com.ibm.disni.verbs.impl.NatIbvPd;
import io.rnbd.rdma.api.QueuePair;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Test support: type-2 memory windows through libdisni.so (which binds these natives when
 * the test's class loader creates an event channel, as for {@link CmNative}). The provider's
 * windows are type 1 ({@link MwNative}), which no peer can invalidate; the tests need a type-2
 * one because only such a window (or a fast-registered region)
 * can be invalidated by a peer's SEND_WITH_INV on rxe, and that success path is what
 * Linux's RTRS exercises against a kernel client's FRMR.
 */
public final class VerbsNative {
    private VerbsNative() {
    }

    static native long allocMw(long pd);

    static native int mwRkey(long mw);

    static native int deallocMw(long mw);

    static native void setMwRkey(long mw, int rkey);

    static native long bindMw(long qp, long mw, long mr, long addr, long len, int access);

    /**
     * Puts the key before {@code key} back into {@code region}'s window, as the window holds it
     * while a thread that posted the bind to {@code key} has not yet stored it: what the next
     * bind of the window, from another thread, finds there. The region's window must exist.
     */
    public static void staleWindowKey(io.rnbd.rdma.api.MemoryRegion region, int key) {
        long mw = ((DisniMemoryRegion) region).windowHandle();
        if (mw == 0) {
            throw new IllegalStateException("the region has no window yet");
        }
        setMwRkey(mw, (key & 0xffffff00) | ((key - 1) & 0xff));
    }

    /** A window bound over a whole buffer on one QP; close it before the QP. */
    public static final class Window implements AutoCloseable {
        private final long mw;
        private final IbvMr mr;
        private final long address;
        private final int rkey;

        private Window(long mw, IbvMr mr, long address, int rkey) {
            this.mw = mw;
            this.mr = mr;
            this.address = address;
            this.rkey = rkey;
        }

        public int rkey() {
            return rkey;
        }

        public long address() {
            return address;
        }

        @Override
        public void close() throws IOException {
            int err = deallocMw(mw);
            mr.deregMr().execute().free();
            if (err != 0) {
                throw new IOException("ibv_dealloc_mw failed (errno " + err + ")");
            }
        }
    }

    /**
     * Registers {@code buffer} (direct) for window binding in {@code qp}'s protection
     * domain and binds a type-2 window over it with remote read and write, posted
     * unsignaled on {@code qp} (which must be established): it is in effect once a later
     * request of {@code qp} has completed.
     */
    public static Window bind(QueuePair qp, ByteBuffer buffer) throws IOException {
        DisniQueuePair q = (DisniQueuePair) qp;
        DisniProtectionDomain pd = (DisniProtectionDomain) qp.pd();
        long address = MemoryUtils.getAddress(buffer);
        IbvMr mr = pd.ibv().regMr(address, buffer.capacity(), IbvMr.IBV_ACCESS_LOCAL_WRITE
                | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ | IbvMr.IBV_ACCESS_MW_BIND)
                .execute().free().getMr();
        long mw = allocMw(((NatIbvPd) pd.ibv()).getObjId());
        if (mw <= 0) {
            mr.deregMr().execute().free();
            throw new IOException("ibv_alloc_mw failed (errno " + -mw + ")");
        }
        long rkey = bindMw(q.ibvQpHandle(), mw, ((NatIbvMr) mr).getObjId(), address, buffer.capacity(),
                IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ);
        if (rkey < 0) {
            deallocMw(mw);
            mr.deregMr().execute().free();
            throw new IOException("bind of the memory window failed (errno " + -rkey + ")");
        }
        return new Window(mw, mr, address, (int) rkey);
    }
}
