package io.rnbd.rdma.disni.internal;

import com.ibm.disni.util.MemoryUtils;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A queue pair's receive, posted with no allocation (libdisni.so's extension native, since ABI 7): its
 * SGEs go into a direct buffer the queue pair keeps and the native reads them by address. DiSNI's
 * own post builds a new {@code SVCPostRecv} for every call, its work-request list serialised
 * afresh into a pooled buffer: 7 % of the Java samples of a server's completion thread at 4 KiB
 * (docs/perf.md, run 29), where a server posts a receive again for every request it takes in.
 * Not thread-safe: its queue pair's posting lock guards it.
 */
final class RecvPost implements DisniWr.SgeSink {
    // the layout libdisni's read_sges reads (JAVA_SGE_SIZE), as SendChain's SGL
    private static final int SGE = 16;

    private final ByteBuffer sgl = ByteBuffer.allocateDirect(SendChain.MAX_SGE * SGE).order(ByteOrder.nativeOrder());
    private final long address = MemoryUtils.getAddress(sgl);
    private int sges;

    /** Starts a request: {@link #sge} for each of its SGEs next. */
    void start() {
        sges = 0;
    }

    @Override
    public void sge(long addr, int length, int lkey) {
        if (sges == SendChain.MAX_SGE) {
            throw new IllegalStateException("more than " + SendChain.MAX_SGE + " SGEs");
        }
        int s = sges++ * SGE;
        sgl.putLong(s, addr);
        sgl.putInt(s + 8, length);
        sgl.putInt(s + 12, lkey);
    }

    /** Posts the request started last on {@code qp} (an ibv_qp pointer) as {@code wrId}: 0 or an errno. */
    int post(long qp, long wrId) {
        return post(qp, wrId, address, sges);
    }

    static native int post(long qp, long wrId, long sgl, int numSge);
}
