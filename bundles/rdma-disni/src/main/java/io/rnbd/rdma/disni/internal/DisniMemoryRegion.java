package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvMr;
import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/**
 * A registered direct buffer, registered twice: once for local access (the lkey, stable
 * until close) and once for remote access (the rkey). Invalidation deregisters only the
 * remote registration (the adapter then refuses the rkey) while the region stays usable
 * in local SGEs, as a local invalidate of an rkey does (RTRS's always_invalidate RDMA-
 * writes a read's data from a chunk whose rkey it has killed); re-registration registers
 * the remote side anew, and never hands out the rkey it just killed.
 */
final class DisniMemoryRegion implements MemoryRegion {
    private final DisniProtectionDomain pd;
    private final ByteBuffer buffer;
    private final long address;
    private final Set<Access> access;
    private final IbvMr localMr;
    private IbvMr mr;
    private final int lkey;
    private volatile int rkey;
    private volatile boolean valid;
    private boolean closed;

    DisniMemoryRegion(DisniProtectionDomain pd, ByteBuffer buffer, long address, Set<Access> access)
            throws RdmaException {
        this.pd = pd;
        this.buffer = buffer;
        this.address = address;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        localMr = pd.regMr(address, buffer.capacity(), localAccess(this.access));
        lkey = localMr.getLkey();
        try {
            install(pd.regMr(address, buffer.capacity(), this.access));
        } catch (RdmaException e) {
            pd.deregMr(localMr);
            throw e;
        }
    }

    /** Local writes (RECV, RDMA READ destinations) as the single registration allowed them. */
    private static Set<Access> localAccess(Set<Access> access) {
        return access.contains(Access.LOCAL_WRITE) || access.contains(Access.REMOTE_WRITE)
                ? EnumSet.of(Access.LOCAL_WRITE) : EnumSet.noneOf(Access.class);
    }

    private void install(IbvMr m) {
        mr = m;
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

    /** Usable in local SGEs: registered and not closed, whatever its rkey's state. */
    synchronized boolean usableLocally() {
        return !closed;
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
        pd.deregMr(localMr);
        pd.forget(this);
    }
}
