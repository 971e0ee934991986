package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;

import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device's memory regions (siw's {@code siw_mem.c}): the region count against the
 * device's limit, provider-assigned addresses and lkeys, and the rkey table through which
 * alone a peer reaches a region, checked by the receive side for every remote access.
 */
final class SoftMemTable {
    private static final long PAGE = 4096;

    private final ConcurrentHashMap<Integer, SoftMr> rkeys = new ConcurrentHashMap<>();
    /** rkeys: random bits from a CSPRNG (see RkeySource); lkeys, which never leave this host, count. */
    private final RkeySource rkeySource = new RkeySource();
    private final AtomicInteger nextLkey = new AtomicInteger(1);
    private final AtomicLong nextAddress = new AtomicLong(0x7f00_0000_0000L);
    private final AtomicInteger regionCount = new AtomicInteger();

    SoftMr newRegion(SoftPd pd, ByteBuffer region, Set<Access> access) throws RdmaException {
        if (regionCount.incrementAndGet() > SoftDevice.ATTRIBUTES.maxMr()) {
            regionCount.decrementAndGet();
            throw new RdmaException(Errno.ENOMEM, "too many memory regions");
        }
        long span = (region.capacity() + PAGE - 1) / PAGE * PAGE + PAGE;
        long addr = nextAddress.getAndAdd(span);
        SoftMr mr = new SoftMr(pd, region, addr, nextLkey.getAndIncrement(), access);
        mr.reregister();
        return mr;
    }

    /**
     * Enter {@code mr} in the rkey table under a fresh random key: not 0, not live on this
     * device, and not {@code previous} (the key it had until now, 0 for none), so that the
     * old key is refused from now on.
     */
    int publish(SoftMr mr, int previous) {
        while (true) {
            int key = rkeySource.next();
            if (key != previous && rkeys.putIfAbsent(key, mr) == null) {
                return key;
            }
        }
    }

    void unpublish(int rkey, SoftMr mr) {
        rkeys.remove(rkey, mr);
    }

    void released(SoftMr mr) {
        regionCount.decrementAndGet();
    }

    SoftMr lookup(int rkey) {
        return rkeys.get(rkey);
    }

    /** The device is gone: no region is reachable any more. */
    void clear() {
        rkeys.clear();
    }
}
