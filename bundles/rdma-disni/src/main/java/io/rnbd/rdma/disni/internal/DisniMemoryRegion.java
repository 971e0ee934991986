package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvMr;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/**
 * A registered direct buffer. Invalidation deregisters (the adapter then refuses the
 * rkey); re-registration registers anew, and never hands out the rkey it just killed.
 */
final class DisniMemoryRegion implements MemoryRegion {
    private final DisniProtectionDomain pd;
    private final ByteBuffer buffer;
    private final long address;
    private final Set<Access> access;
    private IbvMr mr;
    private volatile int lkey;
    private volatile int rkey;
    private volatile boolean valid;
    private boolean closed;

    DisniMemoryRegion(DisniProtectionDomain pd, ByteBuffer buffer, long address, Set<Access> access)
            throws RdmaException {
        this.pd = pd;
        this.buffer = buffer;
        this.address = address;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        install(pd.regMr(address, buffer.capacity(), this.access));
    }

    private void install(IbvMr m) {
        mr = m;
        lkey = m.getLkey();
        rkey = m.getRkey();
        valid = true;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return buffer.capacity();
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
        return EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
    }

    @Override
    public boolean valid() {
        return valid;
    }

    @Override
    public synchronized void invalidate() {
        if (valid) {
            valid = false;
            pd.deregMr(mr);
        }
    }

    @Override
    public synchronized int reregister() throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EBADF, "memory region closed");
        }
        int old = rkey;
        IbvMr fresh = pd.regMr(address, length(), access);
        if (fresh.getRkey() == old) {
            // the adapter reused the key we just invalidated: take another, drop this one
            IbvMr again = pd.regMr(address, length(), access);
            pd.deregMr(fresh);
            fresh = again;
        }
        if (valid) {
            pd.deregMr(mr);
        }
        install(fresh);
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
            pd.deregMr(mr);
        }
        pd.forget(this);
    }
}
