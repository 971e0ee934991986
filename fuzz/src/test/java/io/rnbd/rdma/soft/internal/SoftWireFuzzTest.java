package io.rnbd.rdma.soft.internal;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rnbd.fuzz.Findings;
import io.rnbd.fuzz.Loopback;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The soft wire from a hostile peer on a raw socket: garbage before the handshake, or a
 * HELLO and then frames built by the fuzzer from the format in {@link Wire} (every type,
 * flag, status and length, lying lengths, READ/WRITE/SEND_INV aimed at a writable region,
 * a read-only one and a local-only one, with their live, stale or random rkeys). After each
 * input: no exception escaped the device's threads, memory the peer had no right to is
 * untouched, and the device still accepts a connection.
 */
class SoftWireFuzzTest {
    private static final int RECVS = 16;
    private static final int SLOT = 4096;
    private static final byte[] RO_PATTERN = pattern(0x5A);
    private static final byte[] LOCAL_PATTERN = pattern(0x6B);
    private static final byte[] TYPES = {Wire.HELLO, Wire.ACCEPT, Wire.REJECT, Wire.SEND, Wire.SEND_IMM, Wire.WRITE,
            Wire.WRITE_IMM, Wire.READ_REQ, Wire.READ_RESP, Wire.ACK, Wire.DISCONNECT, Wire.SEND_INV};

    private static SoftDevice device;
    private static CmListener listener;
    private static MemoryRegion writable;
    private static MemoryRegion readOnly;
    private static MemoryRegion localOnly;
    private static int staleKey;
    private static int inputs;

    private static byte[] pattern(int b) {
        byte[] p = new byte[SLOT];
        Arrays.fill(p, (byte) b);
        return p;
    }

    private static synchronized void setUp() throws Exception {
        if (device != null) {
            return;
        }
        device = new SoftDevice("fz", InetAddress.getByName("127.0.0.1"));
        ProtectionDomain pd = device.allocPd();
        writable = pd.register(ByteBuffer.allocateDirect(2 * SLOT), Access.all());
        staleKey = writable.rkey();
        writable.invalidate();
        writable.reregister();
        readOnly = pd.register(ByteBuffer.allocateDirect(SLOT).put(RO_PATTERN).flip(), Access.of(Access.REMOTE_READ));
        localOnly = pd.register(ByteBuffer.allocateDirect(SLOT).put(LOCAL_PATTERN).flip(),
                Access.of(Access.LOCAL_WRITE));
        MemoryRegion rx = pd.register(ByteBuffer.allocateDirect(RECVS * SLOT), Access.of(Access.LOCAL_WRITE));
        listener = device.listen(new InetSocketAddress(device.address(), 0), req -> {
            try {
                QueuePair qp = req.accept(new QpInit(pd, 64, 64, 1, (q, wc) -> {
                    if (wc.status() == WcStatus.SUCCESS && wc.wrId() >= 0 && wc.wrId() < RECVS
                            && wc.opcode().name().startsWith("RECV")) {
                        try {
                            q.postRecv(new RecvWr(wc.wrId(), List.of(new Sge(rx, (int) wc.wrId() * SLOT, SLOT))));
                        } catch (RdmaException closed) {
                            // the peer is gone
                        }
                    }
                }), (q, e) -> { }, new byte[] {1, 2, 3}, q -> {
                    for (int i = 0; i < RECVS; i++) {
                        q.postRecv(new RecvWr(i, List.of(new Sge(rx, i * SLOT, SLOT))));
                    }
                });
            } catch (RdmaException e) {
                // a refused accept is the device's answer
            }
        });
    }

    private static long addr(FuzzedDataProvider in) {
        return switch (in.consumeInt(0, 4)) {
            case 0 -> writable.address() + in.consumeInt(-16, 2 * SLOT + 16);
            case 1 -> readOnly.address() + in.consumeInt(0, SLOT);
            case 2 -> localOnly.address() + in.consumeInt(0, SLOT);
            default -> in.consumeLong();
        };
    }

    private static int rkey(FuzzedDataProvider in) {
        return switch (in.consumeInt(0, 5)) {
            case 0 -> writable.rkey();
            case 1 -> readOnly.rkey();
            case 2 -> localOnly.rkey();
            case 3 -> staleKey;
            case 4 -> 0;
            default -> in.consumeInt();
        };
    }

    @FuzzTest
    void frames(FuzzedDataProvider in) throws Exception {
        Loopback.allow();
        setUp();
        try (Findings findings = Findings.watch()) {
            try (Socket s = new Socket()) {
                s.connect(listener.localAddress(), 2000);
                s.setSoTimeout(2000);
                OutputStream out = s.getOutputStream();
                if (in.consumeBoolean()) {
                    out.write(in.consumeBytes(in.consumeInt(0, 256)));
                } else if (hello(in, out, s.getInputStream())) {
                    int frames = in.consumeInt(1, 12);
                    for (int i = 0; i < frames && in.remainingBytes() > 0; i++) {
                        out.write(frame(in));
                    }
                }
                out.flush();
                s.shutdownOutput();
                drain(s.getInputStream());
            } catch (IOException peerClosedFirst) {
                // the device dropped the connection while we wrote: an allowed answer
            }
            assertArrayEquals(RO_PATTERN, bytes(readOnly), "a read-only region was written");
            assertArrayEquals(LOCAL_PATTERN, bytes(localOnly), "a region without remote access was written");
            if (++inputs % 32 == 0) {
                assertAccepts();
            }
            findings.assertNone();
        }
    }

    /** A valid HELLO with the fuzzer's private data; true if the device accepted. */
    private static boolean hello(FuzzedDataProvider in, OutputStream out, InputStream from) throws IOException {
        byte[] pdata = in.consumeBytes(in.consumeInt(0, 56));
        ByteBuffer h = ByteBuffer.allocate(Wire.HDR + pdata.length).order(ByteOrder.LITTLE_ENDIAN);
        Wire.put(h, Wire.HELLO, Wire.ST_OK, pdata.length, Wire.MAGIC, 0, 0, 0);
        h.put(pdata);
        out.write(h.array());
        out.flush();
        DataInputStream d = new DataInputStream(from);
        byte[] hdr = new byte[Wire.HDR];
        d.readFully(hdr);
        ByteBuffer b = ByteBuffer.wrap(hdr).order(ByteOrder.LITTLE_ENDIAN);
        d.readFully(new byte[Wire.len(b, 0)]);
        return Wire.type(b, 0) == Wire.ACCEPT;
    }

    private static byte[] frame(FuzzedDataProvider in) {
        byte type = in.consumeBoolean() ? TYPES[in.consumeInt(0, TYPES.length - 1)] : in.consumeByte();
        byte status = in.consumeBoolean() ? Wire.ST_OK : in.consumeByte();
        byte flags = in.consumeBoolean() ? 0 : in.consumeByte();
        long addr = addr(in);
        int rkey = rkey(in);
        int imm = in.consumeInt();
        int aux = in.consumeBoolean() ? in.consumeInt(0, 2 * SLOT + 64) : in.consumeInt();
        int acked = in.consumeBoolean() ? 0 : in.consumeInt(0, 300);
        byte[] payload = in.consumeBytes(in.consumeInt(0, 2 * SLOT + 64));
        int len = in.consumeBoolean() ? payload.length : in.consumeInt();
        ByteBuffer b = ByteBuffer.allocate(Wire.HDR + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        Wire.put(b, type, status, flags, len, addr, rkey, imm, aux, acked);
        b.put(payload);
        return b.array();
    }

    private static void drain(InputStream from) throws IOException {
        byte[] buf = new byte[16 * 1024];
        try {
            while (from.read(buf) >= 0) {
                // answers, acks, READ_RESP data: all the peer may see
            }
        } catch (SocketTimeoutException stillOpen) {
            throw new AssertionError("the device kept a connection open after the peer's EOF");
        }
    }

    private static byte[] bytes(MemoryRegion mr) {
        byte[] b = new byte[SLOT];
        mr.buffer().get(0, b);
        return b;
    }

    private static void assertAccepts() throws IOException {
        try (Socket s = new Socket()) {
            s.connect(listener.localAddress(), 2000);
            s.setSoTimeout(5000);
            ByteBuffer h = ByteBuffer.allocate(Wire.HDR).order(ByteOrder.LITTLE_ENDIAN);
            Wire.put(h, Wire.HELLO, Wire.ST_OK, 0, Wire.MAGIC, 0, 0, 0);
            s.getOutputStream().write(h.array());
            byte[] hdr = new byte[Wire.HDR];
            new DataInputStream(s.getInputStream()).readFully(hdr);
            assertEquals(Wire.ACCEPT, Wire.type(ByteBuffer.wrap(hdr).order(ByteOrder.LITTLE_ENDIAN), 0),
                    "the device no longer accepts connections");
        }
    }
}
