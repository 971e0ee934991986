package io.rnbd.nbd.gateway.internal;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rnbd.fuzz.Findings;
import io.rnbd.fuzz.Loopback;
import io.rnbd.rnbd.api.BlockDevice;

import io.rnbd.testkit.block.FakeBlockDevice;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;

import static io.rnbd.nbd.proto.NbdConstants.IHAVEOPT;
import static io.rnbd.nbd.proto.NbdConstants.REQUEST_MAGIC;

/**
 * The NBD gateway from a hostile client (only tests are added to the gateway's side: its
 * code is another engineer's; the record decoders alone are fuzzed by
 * {@code io.rnbd.nbd.proto.NbdProtoFuzzTest}). The whole server on a socket gets the
 * fuzzer's handshake (client flags, options with any code and length, NBD_OPT_GO of the
 * export) and then requests of any type, flag, offset and length. After each input the
 * gateway must not have caught an internal error, and still serves a client.
 */
class NbdGatewayFuzzTest {
    private static final int SIZE = 1 << 20;
    private static NbdServer server;
    private static int inputs;

    private static synchronized NbdServer server() throws IOException {
        if (server == null) {
            BlockDevice disk = new FakeBlockDevice(SIZE);
            ExportLookup exports = new ExportLookup() {
                @Override
                public BlockDevice find(String name) {
                    return "disk".equals(name) ? disk : null;
                }

                @Override
                public Collection<String> names() {
                    return List.of("disk");
                }
            };
            server = new NbdServer(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null), exports);
        }
        return server;
    }

    @FuzzTest
    void connection(FuzzedDataProvider in) throws Exception {
        Loopback.allow();
        NbdServer s = server();
        try (Findings findings = Findings.watch()) {
            try (Socket sock = new Socket()) {
                sock.connect(s.tcpAddress(), 2000);
                sock.setSoTimeout(3000);
                ByteBuffer out = ByteBuffer.allocate(64 * 1024);
                if (in.consumeBoolean()) {
                    out.put(in.consumeBytes(in.consumeInt(0, 512)));
                } else {
                    out.putInt(in.consumeBoolean() ? 3 : in.consumeInt());
                    int options = in.consumeInt(0, 3);
                    for (int i = 0; i < options; i++) {
                        option(in, out, in.consumeInt(0, 11), in.consumeBytes(in.consumeInt(0, 64)));
                    }
                    if (in.consumeBoolean()) {
                        go(out, in.consumeBoolean() ? "disk" : in.consumeAsciiString(10));
                        int requests = in.consumeInt(0, 6);
                        for (int i = 0; i < requests && out.remaining() > 8192; i++) {
                            request(in, out);
                        }
                    }
                }
                sock.getOutputStream().write(out.array(), 0, out.position());
                sock.shutdownOutput();
                drain(sock.getInputStream());
            } catch (IOException droppedWhileWriting) {
                // the gateway hung up first: an allowed answer
            }
            if (++inputs % 32 == 0) {
                assertServes(s);
            }
            findings.assertNone();
        }
    }

    private static void option(FuzzedDataProvider in, ByteBuffer out, int code, byte[] data) {
        out.putLong(IHAVEOPT).putInt(code);
        out.putInt(in.consumeBoolean() ? data.length : in.consumeInt());
        out.put(data);
    }

    private static void go(ByteBuffer out, String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        out.putLong(IHAVEOPT).putInt(7).putInt(4 + n.length + 2).putInt(n.length).put(n).putShort((short) 0);
    }

    private static void request(FuzzedDataProvider in, ByteBuffer out) {
        int type = in.consumeBoolean() ? in.consumeInt(0, 7) : in.consumeShort() & 0xffff;
        int len = in.consumeBoolean() ? in.consumeInt(0, 4096) : in.consumeInt();
        out.putInt(in.consumeInt(0, 9) == 0 ? in.consumeInt() : REQUEST_MAGIC);
        out.putShort(in.consumeShort());
        out.putShort((short) type);
        out.putLong(in.consumeLong());
        out.putLong(in.consumeBoolean() ? in.consumeLong(0, SIZE) : in.consumeLong());
        out.putInt(len);
        if (type == 1) {
            out.put(in.consumeBytes(Math.min(Math.max(len, 0), 4096)));
        }
    }

    private static void drain(InputStream from) throws IOException {
        byte[] buf = new byte[16 * 1024];
        try {
            while (from.read(buf) >= 0) {
                // replies
            }
        } catch (SocketTimeoutException stillOpen) {
            // the gateway may wait for a request the client promised: nothing to fault
        }
    }

    /** A client that does the handshake and a read gets its data. */
    private static void assertServes(NbdServer s) throws IOException {
        try (Socket sock = new Socket()) {
            sock.connect(s.tcpAddress(), 2000);
            sock.setSoTimeout(5000);
            ByteBuffer out = ByteBuffer.allocate(256);
            out.putInt(3);
            go(out, "disk");
            sock.getOutputStream().write(out.array(), 0, out.position());
            // the greeting (18 bytes), then the first reply to NBD_OPT_GO (a 20-byte header at least)
            byte[] got = sock.getInputStream().readNBytes(18 + 20);
            if (got.length < 18 + 20) {
                throw new AssertionError("the gateway no longer serves a client (" + got.length + " bytes)");
            }
        }
    }
}
