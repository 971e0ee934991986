package io.rnbd.rnbd.client.internal;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.proto.OpenRsp;

/**
 * What a mapped device looks like, from the server's OPEN_RSP and the session's limits, read
 * as Linux's rnbd_client_setup_device reads them (6.1 to 7.2 alike).
 *
 * @param maxIoSize          largest READ/WRITE piece: the session's max IO size (chunk size − 4
 *                           KiB), block aligned. As in Linux's client, OPEN_RSP's max_hw_sectors
 *                           plays no part: both servers take a request up to the session's max
 *                           IO and split it for their device (Linux's block layer splits a bio
 *                           beyond the queue's max_hw_sectors, ours {@code IoHandler.inPieces})
 * @param maxDiscardBytes    largest DISCARD piece, 0 = cannot discard
 * @param maxWriteZeroesBytes largest WRITE_ZEROES piece, 0 = write zero buffers instead
 * @param maxSecureEraseBytes largest SECURE_ERASE piece: max_discard_sectors when the server set
 *                           secure_discard (Linux's client takes the same), else 0
 */
record DeviceGeometry(int deviceId, long size, int logicalBlockSize, int physicalBlockSize, int maxIoSize,
                      int maxDiscardBytes, int maxWriteZeroesBytes, int maxSecureEraseBytes, Capabilities caps) {

    static DeviceGeometry of(OpenRsp rsp, int sessionMaxIo, AccessMode mode) {
        int lbs = rsp.logicalBlockSize();
        // a session without a max IO (a test's transport) falls back to what the server's device takes
        long io = sessionMaxIo > 0 ? sessionMaxIo : rsp.maxHwSectors() * OpenRsp.SECTOR_SIZE;
        boolean write = mode != AccessMode.RO;
        int discard = write ? piece(rsp.maxDiscardSectors(), lbs) : 0;
        int zeroes = write ? piece(rsp.maxWriteZeroesSectors(), lbs) : 0;
        int secure = rsp.secureDiscard() ? discard : 0;
        // as Linux: a write cache (WRITEBACK) makes FLUSH matter, and FUA counts only with it
        boolean writeback = (rsp.cachePolicy() & OpenRsp.CACHE_WRITEBACK) != 0;
        boolean fua = writeback && (rsp.cachePolicy() & OpenRsp.CACHE_FUA) != 0;
        Capabilities caps = new Capabilities(write, writeback, fua, discard > 0, zeroes > 0, true, false,
                secure > 0);
        return new DeviceGeometry(rsp.deviceId(), rsp.sizeBytes(), lbs, rsp.effectivePhysicalBlockSize(),
                (int) align(Math.min(io, Integer.MAX_VALUE), lbs), discard, zeroes, secure, caps);
    }

    private static int piece(long sectors, int lbs) {
        long bytes = Math.min(sectors * OpenRsp.SECTOR_SIZE, Integer.MAX_VALUE);
        return (int) align(bytes, lbs);
    }

    private static long align(long v, int lbs) {
        return v / lbs * lbs;
    }
}
