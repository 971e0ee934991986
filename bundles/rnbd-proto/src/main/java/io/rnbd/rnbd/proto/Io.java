package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * rnbd_msg_io, 32 B: header, device id u32 @4, sector u64 @8 (512 B units; any value for a
 * FLUSH, which Linux sends with sector (u64) -1), rw u32 @16
 * (op in the low 8 bits, flags above), bi_size u32 @20 (bytes), prio u16 @24, 6 bytes of
 * padding to the struct's 8-byte alignment.
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
    public static final int F_PREFLUSH = 1 << (OP_BITS + 2);
    public static final int F_NOUNMAP = 1 << (OP_BITS + 3);
    public static final int F_ALL = F_SYNC | F_FUA | F_PREFLUSH | F_NOUNMAP;

    public Io {
        if ((rw & OP_MASK) != OP_FLUSH) {
            Wire.checkNonNegative("sector", sector);
        }
        Wire.checkNonNegative("biSize", biSize);
        Wire.checkU16("prio", prio);
        if ((rw & OP_MASK) > OP_WRITE_ZEROES || (rw & ~OP_MASK & ~F_ALL) != 0) {
            throw new IllegalArgumentException("bad rw " + Integer.toHexString(rw));
        }
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
        if ((rw & OP_MASK) > OP_WRITE_ZEROES) {
            throw new ProtoException(Errno.EINVAL, "unknown op " + (rw & OP_MASK));
        }
        if ((rw & ~OP_MASK & ~F_ALL) != 0) {
            throw new ProtoException(Errno.EINVAL, "unknown flags " + Integer.toHexString(rw & ~OP_MASK));
        }
        if (biSize < 0) {
            throw new ProtoException(Errno.EINVAL, "bi_size out of range");
        }
        return new Io(v.getInt(4), sector, rw, biSize, Short.toUnsignedInt(v.getShort(24)));
    }
}
