package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/** The payload of an NBD_REP_INFO reply: a u16 NBD_INFO_* type and its data. */
public sealed interface Info {
    /** Bytes of the payload, type included (the option reply's length). */
    int encodedSize();

    void encode(ByteBuffer buf);

    /** Decodes one NBD_REP_INFO payload (position..limit); unknown types give {@link Unknown}. */
    static Info decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, 2, "NBD_REP_INFO");
        int type = Short.toUnsignedInt(buf.getShort());
        switch (type) {
            case NbdConstants.INFO_EXPORT: {
                exact(buf, Export.SIZE - 2, "NBD_INFO_EXPORT");
                long size = buf.getLong();
                int flags = Short.toUnsignedInt(buf.getShort());
                Codec.checkTransmission(size, flags);
                return new Export(size, flags);
            }
            case NbdConstants.INFO_BLOCK_SIZE: {
                exact(buf, BlockSize.SIZE - 2, "NBD_INFO_BLOCK_SIZE");
                return new BlockSize(buf.getInt(), buf.getInt(), buf.getInt());
            }
            case NbdConstants.INFO_NAME:
                return new Name(Codec.string(buf, buf.remaining(), "NBD_INFO_NAME"));
            case NbdConstants.INFO_DESCRIPTION:
                return new Description(Codec.string(buf, buf.remaining(), "NBD_INFO_DESCRIPTION"));
            default:
                buf.position(buf.limit());
                return new Unknown(type);
        }
    }

    private static void exact(ByteBuffer buf, int n, String what) throws NbdProtoException {
        if (buf.remaining() != n) {
            throw new NbdProtoException(Errno.EBADMSG, what + " needs " + n + " bytes after its type, got "
                    + buf.remaining());
        }
    }

    /** NBD_INFO_EXPORT: u16 type, u64 size, u16 transmission flags. */
    record Export(long size, int transmissionFlags) implements Info {
        public static final int SIZE = 12;

        @Override
        public int encodedSize() {
            return SIZE;
        }

        @Override
        public void encode(ByteBuffer buf) {
            buf.putShort((short) NbdConstants.INFO_EXPORT).putLong(size).putShort((short) transmissionFlags);
        }
    }

    /** NBD_INFO_BLOCK_SIZE: u16 type, u32 minimum, u32 preferred, u32 maximum. */
    record BlockSize(int minimum, int preferred, int maximum) implements Info {
        public static final int SIZE = 14;

        @Override
        public int encodedSize() {
            return SIZE;
        }

        @Override
        public void encode(ByteBuffer buf) {
            buf.putShort((short) NbdConstants.INFO_BLOCK_SIZE).putInt(minimum).putInt(preferred).putInt(maximum);
        }
    }

    /** NBD_INFO_NAME: u16 type, the canonical export name. */
    record Name(String name) implements Info {
        @Override
        public int encodedSize() {
            return 2 + Codec.utf8(name, "export name").length;
        }

        @Override
        public void encode(ByteBuffer buf) {
            buf.putShort((short) NbdConstants.INFO_NAME).put(Codec.utf8(name, "export name"));
        }
    }

    /** NBD_INFO_DESCRIPTION: u16 type, text for humans. */
    record Description(String text) implements Info {
        @Override
        public int encodedSize() {
            return 2 + Codec.utf8(text, "description").length;
        }

        @Override
        public void encode(ByteBuffer buf) {
            buf.putShort((short) NbdConstants.INFO_DESCRIPTION).put(Codec.utf8(text, "description"));
        }
    }

    /** An information type this side does not know (clients must ignore it). */
    record Unknown(int type) implements Info {
        @Override
        public int encodedSize() {
            return 2;
        }

        @Override
        public void encode(ByteBuffer buf) {
            buf.putShort((short) type);
        }
    }
}
