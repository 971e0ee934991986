package io.rnbd.rnbd.client;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.proto.OpenRsp;

/**
 * What a mapped device looks like, from the server's OPEN_RSP and the session's limits.
 *
 * @param maxIoSize          largest READ/WRITE piece: the server's max_hw_sectors and the
 *                           session's max IO size, block aligned
 * @param maxDiscardBytes    largest DISCARD piece, 0 = cannot discard
 * @param maxWriteZeroesBytes largest WRITE_ZEROES piece, 0 = write zero buffers instead
 */
record DeviceGeometry(int deviceId, long size, int logicalBlockSize, int physicalBlockSize, int maxIoSize,
                      int maxDiscardBytes, int maxWriteZeroesBytes, Capabilities caps) {

    static DeviceGeometry of(OpenRsp rsp, int sessionMaxIo, AccessMode mode) {
        int lbs = rsp.logicalBlockSize();
        long hw = (long) rsp.maxHwSectors() * OpenRsp.SECTOR_SIZE;
        long io = sessionMaxIo > 0 ? Math.min(hw, sessionMaxIo) : hw;
        boolean write = mode != AccessMode.RO;
        int discard = write ? piece(rsp.maxDiscardSectors(), lbs) : 0;
        int zeroes = write ? piece(rsp.maxWriteZeroesSectors(), lbs) : 0;
        Capabilities caps = new Capabilities(write, (rsp.cachePolicy() & OpenRsp.CACHE_WRITEBACK) != 0,
                (rsp.cachePolicy() & OpenRsp.CACHE_FUA) != 0, discard > 0, zeroes > 0, true);
        return new DeviceGeometry(rsp.deviceId(), rsp.sizeBytes(), lbs, rsp.physicalBlockSize(),
                (int) align(Math.min(io, Integer.MAX_VALUE), lbs), discard, zeroes, caps);
    }

    private static int piece(int sectors, int lbs) {
        long bytes = Math.min((long) sectors * OpenRsp.SECTOR_SIZE, Integer.MAX_VALUE);
        return (int) align(bytes, lbs);
    }

    private static long align(long v, int lbs) {
        return v / lbs * lbs;
    }
}
