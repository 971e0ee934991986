package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The data of NBD_OPT_INFO and NBD_OPT_GO.
 * <pre>
 *  0    u32 length of name (n)
 *  4    n bytes export name (UTF-8)
 *  4+n  u16 number of information requests (k)
 *  6+n  k x u16 NBD_INFO_* requested
 * </pre>
 */
public record GoRequest(String name, int[] infoRequests) {
    public GoRequest {
        infoRequests = infoRequests.clone();
    }

    @Override
    public int[] infoRequests() {
        return infoRequests.clone();
    }

    public boolean requested(int info) {
        for (int i : infoRequests) {
            if (i == info) {
                return true;
            }
        }
        return false;
    }

    public int encodedSize() {
        return 4 + Codec.utf8(name, "export name").length + 2 + 2 * infoRequests.length;
    }

    public void encode(ByteBuffer buf) {
        byte[] n = Codec.utf8(name, "export name");
        buf.putInt(n.length).put(n).putShort((short) infoRequests.length);
        for (int i : infoRequests) {
            buf.putShort((short) i);
        }
    }

    /** Decodes exactly the option data in {@code buf} (position..limit). */
    public static GoRequest decode(ByteBuffer buf) throws NbdProtoException {
        Codec.need(buf, 6, "NBD_OPT_GO data");
        int nameLen = buf.getInt();
        if (nameLen < 0 || nameLen > buf.remaining() - 2) {
            throw new NbdProtoException(Errno.EBADMSG, "export name length " + Integer.toUnsignedString(nameLen)
                    + " beyond the option data");
        }
        String name = Codec.string(buf, nameLen, "export name");
        Codec.need(buf, 2, "info request count");
        int count = Short.toUnsignedInt(buf.getShort());
        if (buf.remaining() != 2 * count) {
            throw new NbdProtoException(Errno.EBADMSG, count + " info requests but " + buf.remaining() + " bytes left");
        }
        int[] infos = new int[count];
        for (int i = 0; i < count; i++) {
            infos[i] = Short.toUnsignedInt(buf.getShort());
        }
        return new GoRequest(name, infos);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GoRequest g && g.name.equals(name) && Arrays.equals(g.infoRequests, infoRequests);
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(infoRequests);
    }

    @Override
    public String toString() {
        return "GoRequest[name=" + name + ", infoRequests=" + Arrays.toString(infoRequests) + "]";
    }
}
