package io.rnbd.rtrs.proto;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.function.Consumer;

final class Hex {
    private Hex() {
    }

    /** Hex with spaces/newlines ignored and "zN" meaning N zero bytes. */
    static byte[] bytes(String spec) {
        StringBuilder sb = new StringBuilder();
        for (String tok : spec.trim().split("\\s+")) {
            if (tok.startsWith("z")) {
                sb.append("00".repeat(Integer.parseInt(tok.substring(1))));
            } else {
                sb.append(tok);
            }
        }
        return HexFormat.of().parseHex(sb.toString());
    }

    static byte[] encode(int size, Consumer<ByteBuffer> enc) {
        ByteBuffer b = ByteBuffer.allocate(size + 8);
        b.position(3); // not at 0, and big-endian order on purpose: codecs must not rely on either
        enc.accept(b);
        byte[] out = new byte[b.position() - 3];
        b.get(3, out);
        return out;
    }

    static ByteBuffer buf(byte[] b) {
        return ByteBuffer.wrap(b);
    }
}
