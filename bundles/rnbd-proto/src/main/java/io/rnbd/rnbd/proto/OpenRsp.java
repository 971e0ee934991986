package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * rnbd_msg_open_rsp, 56 B: header, device id u32 @4, nsectors u64 @8, max_hw_sectors @16,
 * max_write_zeroes_sectors @20, max_discard_sectors @24, discard_granularity @28,
 * discard_alignment @32 (u32 each), physical_block_size @36, logical_block_size @38,
 * max_segments @40, secure_discard @42 (u16 each), obsolete_rotational u8 @44,
 * cache_policy u8 @45, reserved[10]. Sectors are 512 B units; the rest are bytes.
 *
 * <p>The u32 fields are unsigned and held in longs: Linux's server copies the block layer's
 * limits as they are, so a brd disk of Linux 6.12 or newer reports max_discard_sectors
 * UINT_MAX ({@code .max_hw_discard_sectors = UINT_MAX}), which a Java int reads as -1.
 * Decoding is as tolerant as Linux's rnbd-clt.c (process_msg_open_rsp and
 * rnbd_client_setup_device, the same in 6.1, 6.12 and 7.2): it refuses only what Linux's client
 * or its block layer refuses (a logical block size of 0 or not a power of two from 512 up, a
 * physical block size at least the logical one but not a power of two), takes a physical block
 * size below the logical one as the logical one (blk_validate_limits), ignores unknown
 * cache_policy bits ({@link #unknownCachePolicyBits}), and reads secure_discard as a flag
 * (7.2 sends bdev_max_secure_erase_sectors cut to 16 bits there).
 *
 * @param maxHwSectors          the server device's largest READ/WRITE, 512 B sectors; Linux's
 *                              client ignores it (the session's max IO bounds a request) and so
 *                              does ours
 * @param maxWriteZeroesSectors largest WRITE_ZEROES, 0 = not supported (u32)
 * @param maxDiscardSectors     largest DISCARD, 0 = not supported; with secure_discard also
 *                              the largest SECURE_ERASE (u32)
 * @param cachePolicy           {@link #CACHE_FUA} | {@link #CACHE_WRITEBACK}, and whatever bits
 *                              a newer server adds
 */
public record OpenRsp(int deviceId, long nsectors, long maxHwSectors, long maxWriteZeroesSectors,
                      long maxDiscardSectors, long discardGranularity, long discardAlignment,
                      int physicalBlockSize, int logicalBlockSize, int maxSegments,
                      boolean secureDiscard, int cachePolicy) implements RnbdMsg {
    public static final int SIZE = 56;
    public static final int SECTOR_SIZE = 512;
    /** The device honours FUA writes (RNBD_FUA); Linux's client heeds it only with {@link #CACHE_WRITEBACK}. */
    public static final int CACHE_FUA = 1;
    /** The device has a volatile write cache: FLUSH matters (RNBD_WRITEBACK). */
    public static final int CACHE_WRITEBACK = 2;
    /** The cache_policy bits rnbd-proto.h (2.2) defines. */
    public static final int CACHE_KNOWN = CACHE_FUA | CACHE_WRITEBACK;

    public OpenRsp {
        Wire.checkNonNegative("nsectors", nsectors);
        Wire.checkU32("maxHwSectors", maxHwSectors);
        Wire.checkU32("maxWriteZeroesSectors", maxWriteZeroesSectors);
        Wire.checkU32("maxDiscardSectors", maxDiscardSectors);
        Wire.checkU32("discardGranularity", discardGranularity);
        Wire.checkU32("discardAlignment", discardAlignment);
        Wire.checkU16("physicalBlockSize", physicalBlockSize);
        Wire.checkU16("logicalBlockSize", logicalBlockSize);
        Wire.checkU16("maxSegments", maxSegments);
        Wire.checkU8("cachePolicy", cachePolicy);
    }

    /** Device size in bytes. */
    public long sizeBytes() {
        return nsectors * SECTOR_SIZE;
    }

    /** cache_policy bits this side does not know (a newer server's): ignored, as Linux's client ignores them. */
    public int unknownCachePolicyBits() {
        return cachePolicy & ~CACHE_KNOWN;
    }

    /**
     * The physical block size as Linux's block layer takes it (blk_validate_limits): one below
     * the logical block size is the logical block size.
     */
    public int effectivePhysicalBlockSize() {
        return Math.max(physicalBlockSize, logicalBlockSize);
    }

    @Override
    public MsgType type() {
        return MsgType.OPEN_RSP;
    }

    @Override
    public void encode(ByteBuffer buf) {
        ByteBuffer v = Wire.out(buf, MsgType.OPEN_RSP);
        v.putInt(4, deviceId);
        v.putLong(8, nsectors);
        v.putInt(16, (int) maxHwSectors);
        v.putInt(20, (int) maxWriteZeroesSectors);
        v.putInt(24, (int) maxDiscardSectors);
        v.putInt(28, (int) discardGranularity);
        v.putInt(32, (int) discardAlignment);
        v.putShort(36, (short) physicalBlockSize);
        v.putShort(38, (short) logicalBlockSize);
        v.putShort(40, (short) maxSegments);
        v.putShort(42, (short) (secureDiscard ? 1 : 0));
        v.put(45, (byte) cachePolicy);
    }

    public static OpenRsp decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.OPEN_RSP);
        long nsectors = v.getLong(8);
        int physical = Short.toUnsignedInt(v.getShort(36));
        int logical = Short.toUnsignedInt(v.getShort(38));
        if (nsectors < 0 || nsectors > Long.MAX_VALUE / SECTOR_SIZE) {
            // Linux takes any u64 (set_capacity); beyond 2^63 bytes no offset of ours could address it
            throw new ProtoException(Errno.EINVAL, "nsectors out of range");
        }
        if (logical == 0) {
            // process_msg_open_rsp: "if (!rsp->logical_block_size) err = -EINVAL"
            throw new ProtoException(Errno.EINVAL, "logical block size 0");
        }
        if (!isBlockSize(logical)) {
            throw new ProtoException(Errno.EINVAL, "bad logical block size " + logical);
        }
        if (physical >= logical && Integer.bitCount(physical) != 1) {
            throw new ProtoException(Errno.EINVAL, "bad physical block size " + physical);
        }
        return new OpenRsp(v.getInt(4), nsectors, u32(v, 16), u32(v, 20), u32(v, 24), u32(v, 28), u32(v, 32),
                physical, logical, Short.toUnsignedInt(v.getShort(40)), v.getShort(42) != 0,
                Byte.toUnsignedInt(v.get(45)));
    }

    private static long u32(ByteBuffer v, int at) {
        return Integer.toUnsignedLong(v.getInt(at));
    }

    private static boolean isBlockSize(int v) {
        return v >= SECTOR_SIZE && Integer.bitCount(v) == 1;
    }
}
