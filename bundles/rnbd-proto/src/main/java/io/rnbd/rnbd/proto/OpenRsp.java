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
 * @param maxHwSectors          largest READ/WRITE, 512 B sectors
 * @param maxWriteZeroesSectors largest WRITE_ZEROES, 0 = not supported
 * @param maxDiscardSectors     largest DISCARD, 0 = not supported
 * @param cachePolicy           {@link #CACHE_FUA} | {@link #CACHE_WRITEBACK}
 */
public record OpenRsp(int deviceId, long nsectors, int maxHwSectors, int maxWriteZeroesSectors,
                      int maxDiscardSectors, int discardGranularity, int discardAlignment,
                      int physicalBlockSize, int logicalBlockSize, int maxSegments,
                      boolean secureDiscard, int cachePolicy) implements RnbdMsg {
    public static final int SIZE = 56;
    public static final int SECTOR_SIZE = 512;
    /** The device honours FUA writes (RNBD_FUA). */
    public static final int CACHE_FUA = 1;
    /** The device has a volatile write cache: FLUSH matters (RNBD_WRITEBACK). */
    public static final int CACHE_WRITEBACK = 2;

    public OpenRsp {
        Wire.checkNonNegative("nsectors", nsectors);
        Wire.checkNonNegative("maxHwSectors", maxHwSectors);
        Wire.checkNonNegative("maxWriteZeroesSectors", maxWriteZeroesSectors);
        Wire.checkNonNegative("maxDiscardSectors", maxDiscardSectors);
        Wire.checkU16("physicalBlockSize", physicalBlockSize);
        Wire.checkU16("logicalBlockSize", logicalBlockSize);
        Wire.checkU16("maxSegments", maxSegments);
        Wire.checkU8("cachePolicy", cachePolicy);
    }

    /** Device size in bytes. */
    public long sizeBytes() {
        return nsectors * SECTOR_SIZE;
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
        v.putInt(16, maxHwSectors);
        v.putInt(20, maxWriteZeroesSectors);
        v.putInt(24, maxDiscardSectors);
        v.putInt(28, discardGranularity);
        v.putInt(32, discardAlignment);
        v.putShort(36, (short) physicalBlockSize);
        v.putShort(38, (short) logicalBlockSize);
        v.putShort(40, (short) maxSegments);
        v.putShort(42, (short) (secureDiscard ? 1 : 0));
        v.put(45, (byte) cachePolicy);
    }

    public static OpenRsp decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.OPEN_RSP);
        long nsectors = v.getLong(8);
        int maxHw = v.getInt(16);
        int maxZero = v.getInt(20);
        int maxDiscard = v.getInt(24);
        int physical = Short.toUnsignedInt(v.getShort(36));
        int logical = Short.toUnsignedInt(v.getShort(38));
        int cache = Byte.toUnsignedInt(v.get(45));
        if (nsectors < 0) {
            throw new ProtoException(Errno.EINVAL, "nsectors out of range");
        }
        if (maxHw < 0 || maxZero < 0 || maxDiscard < 0) {
            throw new ProtoException(Errno.EINVAL, "max sectors out of range");
        }
        if (!isBlockSize(logical) || !isBlockSize(physical) || physical < logical) {
            throw new ProtoException(Errno.EINVAL,
                    "bad block sizes: logical " + logical + ", physical " + physical);
        }
        if ((cache & ~(CACHE_FUA | CACHE_WRITEBACK)) != 0) {
            throw new ProtoException(Errno.EINVAL, "unknown cache policy bits " + cache);
        }
        return new OpenRsp(v.getInt(4), nsectors, maxHw, maxZero, maxDiscard, v.getInt(28), v.getInt(32),
                physical, logical, Short.toUnsignedInt(v.getShort(40)), v.getShort(42) != 0, cache);
    }

    private static boolean isBlockSize(int v) {
        return v >= SECTOR_SIZE && Integer.bitCount(v) == 1;
    }
}
