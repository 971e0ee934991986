package io.rnbd.rdma.disni.internal;

import com.ibm.disni.util.MemoryUtils;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A queue pair's work requests not yet handed to the adapter, encoded for one ibv_post_send
 * (libdisni.so's extension native): sends, RDMA writes and reads, and the binds of
 * always_invalidate's memory windows, in posting order. One post per chain is one doorbell,
 * and on rxe one system call, in which the kernel runs every request of the chain; each bind
 * posted alone made rxe schedule its completer from the system call, a context switch per
 * bind. Not thread-safe: its queue pair's posting lock guards it.
 */
final class SendChain implements DisniWr.SgeSink {
    /** The most requests one post hands over (libdisni's MAX_WR_PER_POST). */
    static final int CAPACITY = 64;
    /** SGEs per request (libdisni's MAX_SGE_PER_WR). */
    static final int MAX_SGE = 4;
    /** enum ibv_wr_opcode's IBV_WR_BIND_MW (DiSNI has no constant for it). */
    static final int IBV_WR_BIND_MW = 8;
    static final int IBV_SEND_SIGNALED = 1 << 1;

    // one record per request; the layout libdisni's ext_post_chain reads
    private static final int RECORD = 128;
    private static final int WR_ID = 0;
    private static final int OPCODE = 8;
    private static final int FLAGS = 12;
    private static final int IMM = 16;
    private static final int RKEY = 20;
    private static final int REMOTE_ADDR = 24;
    private static final int MR = 32;
    private static final int BIND_ADDR = 40;
    private static final int BIND_LEN = 48;
    private static final int ACCESS = 56;
    private static final int NUM_SGE = 60;
    private static final int SGL = 64;
    private static final int SGE = 16;

    /**
     * Who counted a bind's keys: told when the bind never reached the adapter, so that its count
     * goes back to the key the window still has (the next bind names it).
     */
    interface BindOwner {
        void bindNotPosted(int fromKey, int rkey);
    }

    private final ByteBuffer records = ByteBuffer.allocateDirect(CAPACITY * RECORD).order(ByteOrder.nativeOrder());
    /** The owner of each bind record, null for the other requests. */
    private final BindOwner[] binders = new BindOwner[CAPACITY];
    private final long address = MemoryUtils.getAddress(records);
    private int count;
    private int sges;

    /** Requests in the chain. */
    int size() {
        return count;
    }

    /** Starts a request: call {@link #sge} for each of its SGEs next. */
    void add(long wrId, int opcode, boolean signaled, int imm, long remoteAddr, int rkey) {
        int r = start(wrId, opcode, signaled);
        records.putInt(r + IMM, imm);
        records.putInt(r + RKEY, rkey);
        records.putLong(r + REMOTE_ADDR, remoteAddr);
    }

    /** An SGE of the request added last (at most {@link #MAX_SGE}). */
    @Override
    public void sge(long addr, int length, int lkey) {
        if (sges == MAX_SGE) {
            throw new IllegalStateException("more than " + MAX_SGE + " SGEs");
        }
        int s = (count - 1) * RECORD + SGL + sges * SGE;
        records.putLong(s, addr);
        records.putInt(s + 8, length);
        records.putInt(s + 12, lkey);
        records.putInt((count - 1) * RECORD + NUM_SGE, ++sges);
    }

    /**
     * A bind of the type-1 window {@code mw} over {@code [addr, addr + len)} of {@code mr} under
     * {@code rkey}, replacing {@code fromKey}: the key the window has once the binds before this
     * one have run. The native gives the window that key just before the post (in the immediate's
     * place, which a bind has no use for) rather than trusting the key the last post left in it:
     * another thread may be between its post and that store.
     */
    void bind(BindOwner owner, long wrId, boolean signaled, long mw, long mr, long addr, long len, int access,
              int fromKey, int rkey) {
        int r = start(wrId, IBV_WR_BIND_MW, signaled);
        binders[count - 1] = owner;
        records.putInt(r + IMM, fromKey);
        records.putInt(r + RKEY, rkey);
        records.putLong(r + REMOTE_ADDR, mw);
        records.putLong(r + MR, mr);
        records.putLong(r + BIND_ADDR, addr);
        records.putLong(r + BIND_LEN, len);
        records.putInt(r + ACCESS, access);
    }

    private int start(long wrId, int opcode, boolean signaled) {
        if (count == CAPACITY) {
            throw new IllegalStateException("chain full");
        }
        binders[count] = null;
        int r = count++ * RECORD;
        for (int i = 0; i < RECORD; i += 8) {
            records.putLong(r + i, 0);
        }
        records.putLong(r + WR_ID, wrId);
        records.putInt(r + OPCODE, opcode);
        records.putInt(r + FLAGS, signaled ? IBV_SEND_SIGNALED : 0);
        sges = 0;
        return r;
    }

    /**
     * Posts the chain on {@code qp} (an ibv_qp pointer) and empties it: 0, or the index of
     * the first request that was not posted, shifted left 32 bits, or'ed with the errno.
     */
    long post(long qp) {
        int n = count;
        if (n == 0) {
            return 0;
        }
        long r = post(qp, address, n);
        count = 0;
        if (r != 0) {
            notPosted((int) (r >>> 32), n);
        }
        return r;
    }

    /** Drops the requests from {@code n} on (their post failed before it reached the adapter). */
    void truncate(int n) {
        int keep = Math.min(count, Math.max(0, n));
        notPosted(keep, count);
        count = keep;
    }

    /** Drops what was not posted (the queue pair is torn down). */
    void clear() {
        notPosted(0, count);
        count = 0;
    }

    /** Records [from, to) never reached the adapter: their binds' owners count back, last first. */
    private void notPosted(int from, int to) {
        for (int i = to - 1; i >= Math.max(0, from); i--) {
            BindOwner o = binders[i];
            if (o != null) {
                binders[i] = null;
                int r = i * RECORD;
                o.bindNotPosted(records.getInt(r + IMM), records.getInt(r + RKEY));
            }
        }
    }

    /** ibv_inc_rkey: a window's next key, its low byte (the key's tag) counting on. */
    static int nextKey(int rkey) {
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }

    private static native long post(long qp, long records, int count);
}
