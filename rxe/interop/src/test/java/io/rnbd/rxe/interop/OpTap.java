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
 * reads, not an inference from what reached the backend. It also counts the answers that carry
 * an errno, so a test can tell an IO error the appliance sent from one a client made itself.
 */
public final class OpTap implements RtrsServerOps {
    volatile RtrsServerOps upper;
    private final Map<Integer, AtomicLong> byRw = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicLong> errnoAnswers = new ConcurrentHashMap<>();

    @Override
    public void onRequest(RtrsServerRequest request) {
        ByteBuffer h = request.userHeader().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        // rnbd_msg_hdr: type u16 @0; rnbd_msg_io: rw u32 @16
        if (h.remaining() >= Io.SIZE && Short.toUnsignedInt(h.getShort(h.position())) == MsgType.IO.wire()) {
            byRw.computeIfAbsent(h.getInt(h.position() + 16), k -> new AtomicLong()).incrementAndGet();
        }
        upper.onRequest(new Answer(request));
    }

    /** The request as the RNBD server sees it, with its answer counted when it carries an errno. */
    private final class Answer implements RtrsServerRequest {
        private final RtrsServerRequest request;

        Answer(RtrsServerRequest request) {
            this.request = request;
        }

        @Override
        public RtrsServerSession session() {
            return request.session();
        }

        @Override
        public boolean isWrite() {
            return request.isWrite();
        }

        @Override
        public ByteBuffer userHeader() {
            return request.userHeader();
        }

        @Override
        public ByteBuffer data() {
            return request.data();
        }

        @Override
        public void complete(int errno) {
            if (errno != 0) {
                errnoAnswers.computeIfAbsent(errno, k -> new AtomicLong()).incrementAndGet();
            }
            request.complete(errno);
        }
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

    /** errno -> how many answers carried it (the transport ignores a second answer; so may this count it). */
    public Map<Integer, Long> errnoAnswers() {
        Map<Integer, Long> m = new TreeMap<>();
        errnoAnswers.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }

    public void reset() {
        byRw.clear();
        errnoAnswers.clear();
    }

    /** rw (hex) -> count, for messages. */
    @Override
    public String toString() {
        Map<String, Long> m = new TreeMap<>();
        byRw.forEach((k, v) -> m.put(String.format("op%d|flags 0x%x", k & Io.OP_MASK, k & ~Io.OP_MASK), v.get()));
        return m.toString();
    }
}
