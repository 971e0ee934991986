package io.rnbd.rtrs.auth.chap.internal.msg;

import java.nio.ByteBuffer;

/**
 * SUCCESS2, host → target, bidirectional only: R2 was right. Header only (type 0x04).
 */
public record Success2(int tid) implements ChapMessage {
    public static final int SIZE = HEADER_SIZE;

    @Override
    public int type() {
        return TYPE_SUCCESS2;
    }

    @Override
    public int size() {
        return SIZE;
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        // header only
    }

    static Success2 decodeBody(int tid, ByteBuffer b) {
        return new Success2(tid);
    }
}
