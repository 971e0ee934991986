package io.rnbd.rnbd.server.internal;

import java.util.HexFormat;

final class HexBytes {
    private HexBytes() {
    }

    static byte[] of(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }
}
