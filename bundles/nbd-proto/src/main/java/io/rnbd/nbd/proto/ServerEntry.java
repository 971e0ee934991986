package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;

/**
 * The data of an NBD_REP_SERVER reply to NBD_OPT_LIST.
 * <pre>
 *  0    u32 length of name (n)
 *  4    n bytes export name
 *  4+n  description for humans (rest of the reply)
 * </pre>
 */
public record ServerEntry(String name, String description) {
    public int encodedSize() {
        return 4 + Codec.utf8(name, "export name").length + Codec.utf8(description, "description").length;
    }

    public void encode(ByteBuffer buf) {
        byte[] n = Codec.utf8(name, "export name");
        buf.putInt(n.length).put(n).put(Codec.utf8(description, "description"));
    }

    public static ServerEntry decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, 4, "NBD_REP_SERVER");
        int len = buf.getInt();
        if (len < 0 || len > buf.remaining()) {
            throw new NbdProtoException(Errno.EBADMSG, "NBD_REP_SERVER name length beyond the reply");
        }
        String name = Codec.string(buf, len, "export name");
        return new ServerEntry(name, Codec.string(buf, buf.remaining(), "export description"));
    }
}
