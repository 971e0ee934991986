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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered direct buffer, registered twice: once for local access (the lkey, stable
 * until close) and once for remote access (the rkey). Invalidation deregisters only the
 * remote registration (the adapter then refuses the rkey) while the region stays usable
 * in local SGEs, as a local invalidate of an rkey does (RTRS's always_invalidate RDMA-
 * writes a read's data from a chunk whose rkey it has killed); re-registration registers
 * the remote side anew, and never hands out the rkey it just killed.
 *
 * <p>Through a queue pair ({@link DisniQueuePair#postInvalidate}, {@link
 * DisniQueuePair#postReregister}) the remote key is a type-1 memory window over the local
 * registration instead, once the first invalidation has dropped the remote registration: a
 * zero-length bind kills its key, a bind over the whole region gives it the next one, each a
 * work request, with no page pinned or unpinned (always_invalidate per request, as Linux's
 * server posts LOCAL_INV and REG_MR). An adapter without windows gets the re-registration, and
 * so does rxe unless memory.windows says otherwise ({@link DisniSettings.MemoryWindows}), except
 * where rxe's kernel changes a registration's access in place (Linux 6.5 and later, {@link
 * MrNative}): there invalidation switches the remote registration's remote access off, which
 * refuses its rkey at once, and re-registration switches it back on under the same rkey. The key
 * comes back, which a new registration's would not; what always_invalidate keeps is that nothing
 * reaches the chunk from the peer between the two.
 */
final class DisniMemoryRegion implements MemoryRegion, SendChain.BindOwner {
    private static final Logger LOG = LoggerFactory.getLogger(DisniMemoryRegion.class);
    private final DisniProtectionDomain pd;
    private final ByteBuffer buffer;
    private final long address;
    private final Set<Access> access;
    /** The verbs access flags of the remote registration with its remote access on and off: the switch runs per request. */
    private final int accessOn;
    private final int accessOff;
    private final IbvMr localMr;
    private IbvMr mr;
    private final int lkey;
    private volatile int rkey;
    private volatile boolean valid;
    private boolean closed;
    /** The type-1 window that carries the rkey once the region is invalidated through queue pairs; 0 before. */
    private long mw;
    /** The window's key as its last bind left it: the next bind takes the key after it. */
    private int windowKey;
    /** The local registration takes no windows (remote access not asked for, or the adapter has none). */
    private boolean windowless;
    /** The remote registration is kept with its remote access switched off ({@link MrNative}): its rkey refused. */
    private boolean remoteOff;

    DisniMemoryRegion(DisniProtectionDomain pd, ByteBuffer buffer, long address, Set<Access> access)
            throws RdmaException {
        this.pd = pd;
        this.buffer = buffer;
        this.address = address;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        this.accessOn = DisniProtectionDomain.verbsAccess(this.access);
        this.accessOff = DisniProtectionDomain.verbsAccess(localAccess(this.access));
        LocalRegistration local = registerLocal(pd, address, buffer.capacity(), this.access);
        localMr = local.mr();
        windowless = !local.bindable();
        lkey = localMr.getLkey();
        try {
            install(pd.regMr(address, buffer.capacity(), this.access));
        } catch (RdmaException e) {
            pd.deregMr(localMr);
            throw e;
        }
    }

    /** A local registration, and whether windows may be bound to it. */
    private record LocalRegistration(IbvMr mr, boolean bindable) {
    }

    /** The local registration; windows may be bound to it when the region is for remote access and the adapter takes them. */
    private static LocalRegistration registerLocal(DisniProtectionDomain pd, long address, int length, Set<Access> access)
            throws RdmaException {
        if (remote(access) && pd.memoryWindows()) {
            try {
                return new LocalRegistration(pd.regMr(address, length, EnumSet.of(Access.LOCAL_WRITE), MwNative.ACCESS_MW_BIND), true);
            } catch (RdmaException noWindows) {
                // the adapter refuses IBV_ACCESS_MW_BIND: invalidation re-registers
            }
        }
        return new LocalRegistration(pd.regMr(address, length, localAccess(access)), false);
    }

    private static boolean remote(Set<Access> access) {
        return access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_READ);
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
        if (!valid) {
            return;
        }
        valid = false;
        if (mr != null) {
            if (!switchRemoteAccess(false)) {
                dropRemoteRegistration();
            }
        } else {
            // no queue pair to bind through: deallocating a window kills its key at once
            deallocWindow();
        }
    }

    /**
     * Switches the remote registration's remote access off or back on, keys unchanged; false,
     * nothing changed, where the device cannot (no toggle, or the kernel refused: the device
     * re-registers from then on).
     */
    private boolean switchRemoteAccess(boolean on) {
        if (!pd.accessToggle()) {
            return false;
        }
        int err = MrNative.reregAccess(handle(mr), on ? accessOn : accessOff);
        if (err != 0) {
            pd.noAccessToggle(err);
            return false;
        }
        remoteOff = !on;
        return true;
    }

    /**
     * Without a window (the adapter has none, or memory.windows keeps them off): drops the
     * remote registration at once and says so; with one, false and nothing done, the kill being
     * a bind on the send queue ({@link #unbind}).
     */
    synchronized boolean invalidateNow() throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EBADF, "memory region closed");
        }
        if (!windowless) {
            return false;
        }
        invalidate();
        return true;
    }

    /**
     * Under a queue pair's posting lock: kills the rkey with a zero-length bind of the window,
     * appended to the queue pair's {@code chain} (signaled, {@code token}); false when the
     * region has no window, nothing appended. The first time the remote registration goes
     * first, at once.
     */
    synchronized boolean unbind(SendChain chain, long token) throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EBADF, "memory region closed");
        }
        if (!window()) {
            return false;
        }
        dropRemoteRegistration();
        int from = windowKey;
        windowKey = SendChain.nextKey(windowKey);
        chain.bind(this, token, true, mw, localHandle(), address, 0, 0, from, windowKey);
        valid = false;
        return true;
    }

    /**
     * Under a queue pair's posting lock: binds the window over the whole region under its next
     * key, appended to the queue pair's {@code chain} (unsignaled, {@code token}), and returns
     * the key; -1 when the region has no window, nothing appended.
     */
    synchronized long rebind(SendChain chain, long token) throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EBADF, "memory region closed");
        }
        if (!window()) {
            return -1;
        }
        dropRemoteRegistration();
        int from = windowKey;
        windowKey = SendChain.nextKey(windowKey);
        chain.bind(this, token, false, mw, localHandle(), address, length(), remoteFlags(), from, windowKey);
        rkey = windowKey;
        valid = true;
        return windowKey & 0xffffffffL;
    }

    /**
     * A bind to {@code rkey} never reached the adapter (its post was refused, or its queue pair
     * torn down first): the window still has {@code fromKey}, which the next bind must name.
     * Under the queue pair's posting lock, as the bind was appended.
     */
    @Override
    public synchronized void bindNotPosted(int fromKey, int rkey) {
        if (windowKey == rkey) {
            windowKey = fromKey;
        }
    }

    /** The window's ibv_mw, 0 before the first bind or without one (tests). */
    synchronized long windowHandle() {
        return mw;
    }

    /** The window, allocated on first use; false when the region or the adapter has none. */
    private boolean window() {
        if (windowless) {
            return false;
        }
        if (mw == 0) {
            long w = MwNative.alloc(pd.handle());
            if (w <= 0) {
                windowless = true;
                LOG.info("rdma-disni: no memory windows on {} (errno {}): always_invalidate re-registers regions",
                        pd.device().name(), -w);
                return false;
            }
            mw = w;
            windowKey = MwNative.rkey(w);
        }
        return true;
    }

    private void dropRemoteRegistration() {
        if (mr != null) {
            pd.deregMr(mr);
            mr = null;
            remoteOff = false;
        }
    }

    private void deallocWindow() {
        if (mw != 0) {
            int err = MwNative.dealloc(mw);
            if (err != 0) {
                LOG.warn("rdma-disni: ibv_dealloc_mw failed (errno {})", err);
            }
            mw = 0;
        }
    }

    private long localHandle() {
        return handle(localMr);
    }

    private static long handle(IbvMr m) {
        return ((com.ibm.disni.verbs.impl.NatIbvMr) m).getObjId();
    }

    /** The window's access: the remote half of the region's. */
    private int remoteFlags() {
        int f = 0;
        if (access.contains(Access.REMOTE_WRITE)) {
            f |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
        if (access.contains(Access.REMOTE_READ)) {
            f |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        return f;
    }

    @Override
    public synchronized int reregister() throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EBADF, "memory region closed");
        }
        if (mr != null && pd.accessToggle() && (!remoteOff || switchRemoteAccess(true))) {
            // the remote registration stays and its access is on: the same key, valid again
            valid = true;
            return rkey;
        }
        int old = rkey;
        IbvMr fresh = pd.regMr(address, length(), access);
        if (fresh.getRkey() == old) {
            // the adapter reused the key we just invalidated: take another, drop this one
            IbvMr again = pd.regMr(address, length(), access);
            pd.deregMr(fresh);
            fresh = again;
        }
        if (mr != null) {
            dropRemoteRegistration();
        } else if (valid) {
            deallocWindow();
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
        valid = false;
        dropRemoteRegistration();
        // before the local registration, which the adapter keeps while a window is bound to it
        deallocWindow();
        pd.deregMr(localMr);
        pd.forget(this);
    }
}
