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
 * <p>Extension, only to a client whose SESS_INFO had {@link SessInfo#EXT_HA} (zeros otherwise,
 * as Linux's server sends): u8 @46 the export's role flags ({@link #HA_EXPORT},
 * {@link #HA_ACTIVE}), u32 @48 the generation of the storage's holder as this server knows it.
 *
 * @param maxHwSectors          largest READ/WRITE, 512 B sectors
 * @param maxWriteZeroesSectors largest WRITE_ZEROES, 0 = not supported
 * @param maxDiscardSectors     largest DISCARD, 0 = not supported
 * @param cachePolicy           {@link #CACHE_FUA} | {@link #CACHE_WRITEBACK}
 * @param haFlags               {@link #HA_EXPORT} | {@link #HA_ACTIVE}, 0 for a server of its own
 * @param generation            how often a server took the storage, as this one knows it (u32)
 */
public record OpenRsp(int deviceId, long nsectors, int maxHwSectors, int maxWriteZeroesSectors,
                      int maxDiscardSectors, int discardGranularity, int discardAlignment,
                      int physicalBlockSize, int logicalBlockSize, int maxSegments,
                      boolean secureDiscard, int cachePolicy, int haFlags, long generation) implements RnbdMsg {
    public static final int SIZE = 56;
    /** The export is served by several servers, one active at a time. */
    public static final int HA_EXPORT = 1;
    /** This server is the active one: it holds the storage. */
    public static final int HA_ACTIVE = 2;
    static final int HA_OFFSET = 46;
    static final int GENERATION_OFFSET = 48;
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
        Wire.checkU8("haFlags", haFlags);
        if (generation < 0 || generation > 0xffff_ffffL) {
            throw new IllegalArgumentException("generation out of u32 range: " + generation);
        }
    }

    /** What Linux's server sends: no extension. */
    public OpenRsp(int deviceId, long nsectors, int maxHwSectors, int maxWriteZeroesSectors, int maxDiscardSectors,
                   int discardGranularity, int discardAlignment, int physicalBlockSize, int logicalBlockSize,
                   int maxSegments, boolean secureDiscard, int cachePolicy) {
        this(deviceId, nsectors, maxHwSectors, maxWriteZeroesSectors, maxDiscardSectors, discardGranularity,
                discardAlignment, physicalBlockSize, logicalBlockSize, maxSegments, secureDiscard, cachePolicy, 0, 0);
    }

    /** The same answer with the extension's fields. */
    public OpenRsp withHa(int flags, long generation) {
        return new OpenRsp(deviceId, nsectors, maxHwSectors, maxWriteZeroesSectors, maxDiscardSectors,
                discardGranularity, discardAlignment, physicalBlockSize, logicalBlockSize, maxSegments, secureDiscard,
                cachePolicy, flags, generation & 0xffff_ffffL);
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
        v.put(HA_OFFSET, (byte) haFlags);
        v.putInt(GENERATION_OFFSET, (int) generation);
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
        // the extension's bytes are read as they are: from a server that did not send it they are 0
        return new OpenRsp(v.getInt(4), nsectors, maxHw, maxZero, maxDiscard, v.getInt(28), v.getInt(32),
                physical, logical, Short.toUnsignedInt(v.getShort(40)), v.getShort(42) != 0, cache,
                Byte.toUnsignedInt(v.get(HA_OFFSET)), Integer.toUnsignedLong(v.getInt(GENERATION_OFFSET)));
    }

    private static boolean isBlockSize(int v) {
        return v >= SECTOR_SIZE && Integer.bitCount(v) == 1;
    }
}
