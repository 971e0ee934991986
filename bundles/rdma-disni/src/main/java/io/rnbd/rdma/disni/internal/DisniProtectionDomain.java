package io.rnbd.rdma.disni.internal;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An ibv_pd; regions are registered over direct buffers with DiSNI's regMr. */
final class DisniProtectionDomain implements ProtectionDomain {
    private static final Logger LOG = LoggerFactory.getLogger(DisniProtectionDomain.class);

    private final DisniDevice device;
    private final IbvPd pd;
    private final Set<DisniMemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    DisniProtectionDomain(DisniDevice device, IbvPd pd) {
        this.device = device;
        this.pd = pd;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    /** Whether this device's regions for remote access take memory windows. */
    boolean memoryWindows() {
        return device.memoryWindows();
    }

    /** The ibv_pd pointer, for the extension natives. */
    long handle() {
        return ((com.ibm.disni.verbs.impl.NatIbvPd) pd).getObjId();
    }

    IbvPd ibv() {
        return pd;
    }

    boolean isOpen() {
        return open;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (!open) {
            throw new RdmaException(Errno.EBADF, "protection domain closed");
        }
        device.checkOpen();
        if (buffer == null || !buffer.isDirect()) {
            throw new RdmaException(Errno.EINVAL, "memory registration needs a direct buffer");
        }
        if (!buffer.hasRemaining()) {
            throw new RdmaException(Errno.EINVAL, "empty buffer");
        }
        long address = MemoryUtils.getAddress(buffer) + buffer.position();
        DisniMemoryRegion mr = new DisniMemoryRegion(this, buffer.slice(), address, access);
        regions.add(mr);
        return mr;
    }

    /** ibv_reg_mr of [address, +length) with the given access. */
    IbvMr regMr(long address, int length, Set<Access> access) throws RdmaException {
        return regMr(address, length, access, 0);
    }

    /** ibv_reg_mr of [address, +length) with the given access and verbs flags besides ({@link MwNative#ACCESS_MW_BIND}). */
    IbvMr regMr(long address, int length, Set<Access> access, int extraFlags) throws RdmaException {
        int flags = extraFlags | verbsAccess(access);
        try {
            return pd.regMr(address, length, flags).execute().free().getMr();
        } catch (IOException e) {
            throw Errors.of("ibv_reg_mr", e);
        }
    }

    /** Whether always_invalidate switches a region's remote access off and on ({@link DisniDevice#accessToggle}). */
    boolean accessToggle() {
        return device.accessToggle();
    }

    /** The kernel refused an access change: the device re-registers from now on. */
    void noAccessToggle(int errno) {
        device.noAccessToggle(errno);
    }

    /** The verbs access flags of {@code access}. */
    static int verbsAccess(Set<Access> access) {
        int flags = 0;
        if (access.contains(Access.LOCAL_WRITE)) {
            flags |= IbvMr.IBV_ACCESS_LOCAL_WRITE;
        }
        if (access.contains(Access.REMOTE_WRITE)) {
            // verbs refuses remote write without local write
            flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_LOCAL_WRITE;
        }
        if (access.contains(Access.REMOTE_READ)) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        return flags;
    }

    void deregMr(IbvMr mr) {
        try {
            mr.deregMr().execute().free();
        } catch (IOException e) {
            LOG.warn("rdma-disni: ibv_dereg_mr failed", e);
        }
    }

    void forget(DisniMemoryRegion mr) {
        regions.remove(mr);
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        for (DisniMemoryRegion mr : new ArrayList<>(regions)) {
            mr.close();
        }
        try {
            int rc = pd.deallocPd();
            if (rc != 0) {
                LOG.warn("rdma-disni: ibv_dealloc_pd on {} returned {} (queue pairs still use it?)", device.name(), rc);
            }
        } catch (Exception e) {
            LOG.warn("rdma-disni: ibv_dealloc_pd failed", e);
        }
        device.forget(this);
    }
}
