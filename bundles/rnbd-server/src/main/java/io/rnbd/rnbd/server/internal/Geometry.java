package io.rnbd.rnbd.server.internal;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.proto.OpenRsp;

/**
 * What OPEN_RSP reports of an export, and what its IO is checked against: captured when the
 * backend opens, kept while it is away, its size following the device's.
 */
record Geometry(long size, int logicalBlockSize, int physicalBlockSize, int maxIoSize, Capabilities caps) {
    private static final int MAX_SEGMENTS = 128;

    static Geometry of(BlockDevice d) {
        return new Geometry(d.size(), d.logicalBlockSize(), d.physicalBlockSize(), d.maxIoSize(),
                d.capabilities());
    }

    Geometry withSize(long bytes) {
        return new Geometry(bytes, logicalBlockSize, physicalBlockSize, maxIoSize, caps);
    }

    /** Largest DISCARD / WRITE_ZEROES in bytes: what fits bi_size, block aligned. */
    int maxRangeBytes() {
        return (Integer.MAX_VALUE / logicalBlockSize) * logicalBlockSize;
    }

    /**
     * The OPEN_RSP for {@code o}: a read-only mapping is told it can neither write nor discard.
     * WRITE_ZEROES is offered to every writable mapping (a device without a zeroing of its own
     * is given zero buffers by its caller, here rather than across the network); secure_discard
     * only with DISCARD, because Linux's client takes max_discard_sectors as the largest
     * SECURE_ERASE too (rnbd_client_setup_device), and never to Linux's client (a session
     * without this appliance's RTRS extensions): its rnbd_client_xfer_request maps a
     * SECURE_ERASE's (absent) payload with blk_rq_map_sg, as it does not for DISCARD and
     * WRITE_ZEROES, and in the rxe guest `blkdiscard -s` on such a device never returned, on
     * 6.1, 6.12 and 7.3 alike, wedging the device (LinuxClientOpsTest). Linux's own server
     * offers it only for the rare device that erases securely.
     */
    OpenRsp openRsp(Opening o) {
        boolean write = o.writable() && caps.write();
        int maxRangeSectors = maxRangeBytes() / OpenRsp.SECTOR_SIZE;
        int cache = (caps.fua() ? OpenRsp.CACHE_FUA : 0) | (caps.flush() ? OpenRsp.CACHE_WRITEBACK : 0);
        boolean discard = write && caps.trim();
        return new OpenRsp(o.deviceId(), size / OpenRsp.SECTOR_SIZE, maxIoSize / OpenRsp.SECTOR_SIZE,
                write ? maxRangeSectors : 0, discard ? maxRangeSectors : 0,
                logicalBlockSize, 0, physicalBlockSize, logicalBlockSize, MAX_SEGMENTS,
                discard && caps.secureErase() && o.session().rtrs.extensions(), cache);
    }
}
