package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.Sge;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A registered region. Remote peers reach it only through the device's rkey table, which
 * holds the region under its current rkey while it is valid.
 */
final class SoftMr implements MemoryRegion {
    private final SoftPd pd;
    private final ByteBuffer region;
    private final long address;
    private final int lkey;
    private final Set<Access> access;
    /** {@link #access} as bits by ordinal: the per-IO checks test a bit, not a set. */
    private final int accessBits;
    private volatile int rkey;
    private volatile boolean valid;
    private volatile boolean closed;

    SoftMr(SoftPd pd, ByteBuffer region, long address, int lkey, Set<Access> access) {
        this.pd = pd;
        this.region = region;
        this.address = address;
        this.lkey = lkey;
        this.access = Collections.unmodifiableSet(
                access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        int bits = 0;
        for (Access a : this.access) {
            bits |= 1 << a.ordinal();
        }
        this.accessBits = bits;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public ByteBuffer buffer() {
        return region.duplicate().order(region.order());
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return region.capacity();
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public boolean valid() {
        return valid && !closed;
    }

    @Override
    public synchronized void invalidate() {
        if (valid) {
            valid = false;
            pd.softDevice().mem().unpublish(rkey, this);
        }
    }

    @Override
    public synchronized int reregister() throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EINVAL, "memory region is deregistered");
        }
        if (valid) {
            pd.softDevice().mem().unpublish(rkey, this);
        }
        rkey = pd.softDevice().mem().publish(this, rkey);
        valid = true;
        return rkey;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (valid) {
            valid = false;
            pd.softDevice().mem().unpublish(rkey, this);
        }
        pd.forget(this);
        pd.softDevice().mem().released(this);
    }

    boolean closed() {
        return closed;
    }

    /**
     * A peer's SEND_WITH_INV named {@code key}: the region stops answering to it, as after
     * {@link #invalidate()}. False (nothing changes) unless {@code key} is the live rkey;
     * the receiver then fails the RECV and its queue pair, as an adapter does.
     */
    synchronized boolean remoteInvalidate(int key) {
        if (!valid || closed || key != rkey) {
            return false;
        }
        valid = false;
        pd.softDevice().mem().unpublish(rkey, this);
        return true;
    }

    boolean permits(Access right) {
        return (accessBits & (1 << right.ordinal())) != 0;
    }

    /** A view of {@code [offset, offset + len)}, positioned at 0. */
    ByteBuffer slice(int offset, int len) {
        return region.slice(offset, len);
    }

    /** Views of the SGEs covering exactly {@code len} bytes. */
    static ByteBuffer[] slices(List<Sge> sgl, int len) {
        ByteBuffer[] views = new ByteBuffer[sgl.size()];
        int left = len;
        for (int i = 0; i < views.length; i++) {
            Sge sge = sgl.get(i);
            int n = Math.min(left, sge.length());
            views[i] = ((SoftMr) sge.mr()).slice(sge.offset(), n);
            left -= n;
        }
        return views;
    }

    /**
     * The remote-access check the target makes before touching memory: a live rkey, the
     * access right, and the whole range inside the region.
     */
    boolean allows(int key, Access right, long addr, long len) {
        return valid && !closed && key == rkey && permits(right)
                && addr >= address && len >= 0 && addr - address + len <= region.capacity();
    }
}
