package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

final class SoftPd implements ProtectionDomain {
    private final SoftDevice device;
    private final Set<SoftMr> regions = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    SoftPd(SoftDevice device) {
        this.device = device;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    SoftDevice softDevice() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (closed) {
            throw new RdmaException(Errno.EINVAL, "protection domain is closed");
        }
        if (buffer == null || !buffer.isDirect()) {
            throw new RdmaException(Errno.EINVAL, "only direct buffers can be registered");
        }
        if (access.contains(Access.REMOTE_WRITE) && !access.contains(Access.LOCAL_WRITE)) {
            throw new RdmaException(Errno.EINVAL, "REMOTE_WRITE requires LOCAL_WRITE");
        }
        if (buffer.isReadOnly() && access.contains(Access.LOCAL_WRITE)) {
            throw new RdmaException(Errno.EACCES, "read-only buffer cannot be registered writable");
        }
        if (buffer.remaining() > device.attributes().maxMrSize()) {
            throw new RdmaException(Errno.EINVAL, "region larger than the device's maxMrSize");
        }
        device.checkOpen();
        ByteBuffer region = buffer.slice().order(ByteOrder.LITTLE_ENDIAN);
        SoftMr mr = device.mem().newRegion(this, region, access);
        regions.add(mr);
        if (closed) {
            mr.close();
            throw new RdmaException(Errno.EINVAL, "protection domain is closed");
        }
        return mr;
    }

    void forget(SoftMr mr) {
        regions.remove(mr);
    }

    @Override
    public void close() {
        closed = true;
        for (SoftMr mr : new ArrayList<>(regions)) {
            mr.close();
        }
    }
}
