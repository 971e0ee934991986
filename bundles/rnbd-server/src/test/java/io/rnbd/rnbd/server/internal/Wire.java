package io.rnbd.rnbd.server.internal;

import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Test helpers: raw RNBD calls over an RTRS client session, and waiting for conditions. */
public final class Wire {
    private Wire() {
    }

    public static CompletableFuture<Integer> write(RtrsClientSession s, ByteBuffer hdr, ByteBuffer data) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        s.write(hdr, data, f::complete);
        return f;
    }

    public static CompletableFuture<Integer> read(RtrsClientSession s, ByteBuffer hdr, ByteBuffer dst) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        s.read(hdr, dst, f::complete);
        return f;
    }

    public static int writeNow(RtrsClientSession s, RnbdMsg msg, ByteBuffer data) {
        return get(write(s, msg.toBuffer(), data));
    }

    public static int readNow(RtrsClientSession s, RnbdMsg msg, ByteBuffer dst) {
        return get(read(s, msg.toBuffer(), dst));
    }

    public static <T> T get(CompletableFuture<T> f) {
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    public static ByteBuffer empty() {
        return ByteBuffer.allocate(0);
    }
}
