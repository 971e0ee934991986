package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * rnbd_msg_io, 32 B: header, device id u32 @4, sector u64 @8 (512 B units; any value for a
 * FLUSH, which Linux sends with sector (u64) -1), rw u32 @16
 * (op in the low 8 bits, flags above), bi_size u32 @20 (bytes), prio u16 @24, 6 bytes of
 * padding to the struct's 8-byte alignment.
 *
 * <p>Decoding is as tolerant as Linux's rnbd_to_bio_flags (protocol 2.2): flag bits it does not
 * know are ignored ({@link #unknownFlags}), and an op it does not know is still a message
 * ({@link #knownOp} false) that the server answers with an errno, so that the next op or flag
 * Linux adds never costs a path. Linux's own server WARNs and runs an unknown op as a READ.
 */
public record Io(int deviceId, long sector, int rw, int biSize, int prio) implements RnbdMsg {
    public static final int SIZE = 32;

    public static final int OP_READ = 0;
    public static final int OP_WRITE = 1;
    public static final int OP_FLUSH = 2;
    public static final int OP_DISCARD = 3;
    public static final int OP_SECURE_ERASE = 4;
    public static final int OP_WRITE_ZEROES = 5;
    public static final int OP_BITS = 8;
    public static final int OP_MASK = (1 << OP_BITS) - 1;

    public static final int F_SYNC = 1 << OP_BITS;
    public static final int F_FUA = 1 << (OP_BITS + 1);
    /** Flush the cache before the op (protocol 2.1). */
    public static final int F_PREFLUSH = 1 << (OP_BITS + 2);
    /** WRITE_ZEROES must leave the range allocated (protocol 2.2). */
    public static final int F_NOUNMAP = 1 << (OP_BITS + 3);
    /** The flags of protocol 2.2. */
    public static final int F_ALL = F_SYNC | F_FUA | F_PREFLUSH | F_NOUNMAP;

    public Io {
        if ((rw & OP_MASK) != OP_FLUSH) {
            Wire.checkNonNegative("sector", sector);
        }
        Wire.checkNonNegative("biSize", biSize);
        Wire.checkU16("prio", prio);
    }

    public static Io of(int deviceId, long sector, int op, int flags, int biSize) {
        return new Io(deviceId, sector, op | flags, biSize, 0);
    }

    public int op() {
        return rw & OP_MASK;
    }

    public int flags() {
        return rw & ~OP_MASK;
    }

    public boolean has(int flag) {
        return (rw & flag) != 0;
    }

    /** Whether the op is one of protocol 2.2's (READ to WRITE_ZEROES). */
    public boolean knownOp() {
        return op() <= OP_WRITE_ZEROES;
    }

    /** Flag bits beyond protocol 2.2's: ignored, as Linux's server ignores them. */
    public int unknownFlags() {
        return rw & ~OP_MASK & ~F_ALL;
    }

    /**
     * Byte offset of the first sector.
     *
     * @throws ArithmeticException for a sector past 2^63 / 512, whose offset a long cannot hold
     *     (it would wrap around to the start of the device): check {@link #sector()} first
     */
    public long offset() {
        return Math.multiplyExact(sector, (long) OpenRsp.SECTOR_SIZE);
    }

    @Override
    public MsgType type() {
        return MsgType.IO;
    }

    @Override
    public void encode(ByteBuffer buf) {
        ByteBuffer v = Wire.out(buf, MsgType.IO);
        v.putInt(4, deviceId);
        v.putLong(8, sector);
        v.putInt(16, rw);
        v.putInt(20, biSize);
        v.putShort(24, (short) prio);
    }

    public static Io decode(ByteBuffer buf) throws ProtoException {
        ByteBuffer v = Wire.in(buf, MsgType.IO);
        long sector = v.getLong(8);
        int rw = v.getInt(16);
        int biSize = v.getInt(20);
        // A FLUSH names no sector: Linux's client sends a flush request's blk_rq_pos, which the
        // block layer leaves at (sector_t) -1 (blk_rq_init)
        if ((rw & OP_MASK) != OP_FLUSH && (sector < 0 || sector > Long.MAX_VALUE / OpenRsp.SECTOR_SIZE)) {
            throw new ProtoException(Errno.EINVAL, "sector out of range");
        }
        if (biSize < 0) {
            throw new ProtoException(Errno.EINVAL, "bi_size out of range");
        }
        return new Io(v.getInt(4), sector, rw, biSize, Short.toUnsignedInt(v.getShort(24)));
    }
}
