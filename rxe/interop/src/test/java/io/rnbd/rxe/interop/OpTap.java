package io.rnbd.rxe.interop;

import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.MsgType;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Between the appliance's RTRS server and its RNBD server: counts every RNBD IO request by its
 * {@code rw} word (op in the low 8 bits, RNBD_F_* above) exactly as the client put it on the
 * wire, before the RNBD server decodes it. What a Linux client sends is then a fact the test
 * reads, not an inference from what reached the backend.
 */
public final class OpTap implements RtrsServerOps {
    volatile RtrsServerOps upper;
    private final Map<Integer, AtomicLong> byRw = new ConcurrentHashMap<>();

    @Override
    public void onRequest(RtrsServerRequest request) {
        ByteBuffer h = request.userHeader().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        // rnbd_msg_hdr: type u16 @0; rnbd_msg_io: rw u32 @16
        if (h.remaining() >= Io.SIZE && Short.toUnsignedInt(h.getShort(h.position())) == MsgType.IO.wire()) {
            byRw.computeIfAbsent(h.getInt(h.position() + 16), k -> new AtomicLong()).incrementAndGet();
        }
        upper.onRequest(request);
    }

    @Override
    public void onSessionConnected(RtrsServerSession session) {
        upper.onSessionConnected(session);
    }

    @Override
    public void onSessionClosed(RtrsServerSession session) {
        upper.onSessionClosed(session);
    }

    /** Requests of {@code op} whose flags include all of {@code withFlags} and none of {@code withoutFlags}. */
    public long count(int op, int withFlags, int withoutFlags) {
        return byRw.entrySet().stream()
                .filter(e -> (e.getKey() & Io.OP_MASK) == op && (e.getKey() & withFlags) == withFlags
                        && (e.getKey() & withoutFlags) == 0)
                .mapToLong(e -> e.getValue().get()).sum();
    }

    public long count(int op) {
        return count(op, 0, 0);
    }

    /** Requests carrying {@code flag}, whatever their op. */
    public long withFlag(int flag) {
        return byRw.entrySet().stream().filter(e -> (e.getKey() & flag) != 0).mapToLong(e -> e.getValue().get()).sum();
    }

    public void reset() {
        byRw.clear();
    }

    /** rw (hex) -> count, for messages. */
    @Override
    public String toString() {
        Map<String, Long> m = new TreeMap<>();
        byRw.forEach((k, v) -> m.put(String.format("op%d|flags 0x%x", k & Io.OP_MASK, k & ~Io.OP_MASK), v.get()));
        return m.toString();
    }
}
