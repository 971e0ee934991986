package io.rnbd.nbd.proto;

import java.nio.ByteBuffer;

/** The client's answer to the greeting: 32 bits of client flags. */
public record ClientFlags(int flags) {
    public static final int SIZE = 4;

    public void encode(ByteBuffer buf) {
        buf.putInt(flags);
    }

    public static ClientFlags decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, SIZE, "client flags");
        return new ClientFlags(buf.getInt());
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }
}
