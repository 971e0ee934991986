package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;
import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.nbd.client.NbdClient;
import io.rnbd.nbd.gateway.testing.MapExports;
import io.rnbd.nbd.gateway.testing.RawNbd;
import io.rnbd.nbd.gateway.testing.TestCerts;
import io.rnbd.nbd.proto.GoRequest;
import io.rnbd.nbd.proto.Info;
import io.rnbd.nbd.proto.OptionReplyHeader;
import io.rnbd.nbd.proto.Request;
import io.rnbd.nbd.proto.SimpleReply;
import io.rnbd.testkit.ExternalTools;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** NBD_OPT_STARTTLS on the gateway against hostile and plain clients (the tools: NbdTlsToolsTest). */
@Timeout(60)
class NbdTlsTest {
    private final FakeBlockDevice disk = new FakeBlockDevice(1 << 20).limitingEveryRequest();
    private final MapExports exports = new MapExports().with("d", disk);

    @TempDir
    Path certs;

    @BeforeEach
    void certificates() throws Exception {
        assumeTrue(ExternalTools.installed("openssl"), "openssl (to issue test certificates) not installed");
        TestCerts.make(certs);
    }

    private NbdServerConfig config(TlsPolicy.Mode mode) throws Exception {
        return NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withTls(TlsPolicy.load(mode, certs, null, null, null, false));
    }

    @Test
    void underRequireAClientThatDoesNotStartTlsGetsNothing() throws Exception {
        try (NbdServer server = new NbdServer(config(TlsPolicy.Mode.REQUIRE), exports);
             RawNbd raw = new RawNbd(server.tcpAddress())) {
            raw.greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
            raw.option(OPT_LIST, null);
            assertEquals(REP_ERR_TLS_REQD, raw.optionReply(null).type(), "LIST would reveal the export names");
            raw.option(OPT_STRUCTURED_REPLY, null);
            assertEquals(REP_ERR_TLS_REQD, raw.optionReply(null).type());
            for (int opt : new int[] {OPT_INFO, OPT_GO}) {
                GoRequest g = new GoRequest("d", new int[0]);
                ByteBuffer b = ByteBuffer.allocate(g.encodedSize());
                g.encode(b);
                raw.option(opt, b.flip());
                assertEquals(REP_ERR_TLS_REQD, raw.optionReply(null).type());
            }
            // EXPORT_NAME has no error reply: the server hangs up.
            raw.option(OPT_EXPORT_NAME, ByteBuffer.wrap("d".getBytes()));
            assertTrue(raw.closedByServer());
        }
        try (NbdServer server = new NbdServer(config(TlsPolicy.Mode.REQUIRE), exports)) {
            assertThrows(Exception.class, () -> NbdClient.connect(server.tcpAddress(), "d").close());
            assertEquals(0, disk.ops(), "nothing reached the device");
        }
    }

    @Test
    void plaintextSentBehindStartTlsIsNotTakenAsEncrypted() throws Exception {
        try (NbdServer server = new NbdServer(config(TlsPolicy.Mode.REQUIRE), exports);
             RawNbd raw = new RawNbd(server.tcpAddress())) {
            raw.greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
            // STARTTLS and, in the same write, a plaintext GO a man in the middle could inject.
            GoRequest g = new GoRequest("d", new int[0]);
            ByteBuffer b = ByteBuffer.allocate(32 + g.encodedSize());
            new io.rnbd.nbd.proto.OptionHeader(OPT_STARTTLS, 0).encode(b);
            new io.rnbd.nbd.proto.OptionHeader(OPT_GO, g.encodedSize()).encode(b);
            g.encode(b);
            raw.send(b.flip());
            assertEquals(REP_ACK, raw.optionReply(null).type());
            assertTrue(raw.closedByServer());
            assertEquals(1, server.stats().snapshot().dropped());
        }
    }

    @Test
    void aStalledTlsHandshakeHitsTheHandshakeDeadline() throws Exception {
        FakeScheduler time = new FakeScheduler();
        try (NbdServer server = new NbdServer(config(TlsPolicy.Mode.REQUIRE), exports, time, time.nanoSource());
             RawNbd raw = new RawNbd(server.tcpAddress())) {
            raw.greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
            raw.option(OPT_STARTTLS, null);
            assertEquals(REP_ACK, raw.optionReply(null).type());
            // ...and never a ClientHello: the server waits in the TLS handshake.
            time.advance(Duration.ofSeconds(29));
            assertEquals(0, server.stats().snapshot().handshakeTimeouts());
            time.advance(Duration.ofSeconds(2));
            assertTrue(raw.closedByServer());
            assertEquals(1, server.stats().snapshot().handshakeTimeouts());
        }
    }

    @Test
    void startTlsThenGoThenIoOverTls() throws Exception {
        ioOverTls(config(TlsPolicy.Mode.REQUIRE));
    }

    @Test
    void theServerKeyFromAPkcs12KeyStore() throws Exception {
        Process p = new ProcessBuilder("openssl", "pkcs12", "-export", "-in", "server-cert.pem", "-inkey",
                "server-key.pem", "-out", "server.p12", "-passout", "pass:secret", "-name", "server")
                .directory(certs.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        TlsPolicy tls = TlsPolicy.load(TlsPolicy.Mode.REQUIRE, null, certs.resolve("server.p12"),
                "secret".toCharArray(), null, false);
        ioOverTls(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null).withTls(tls));
        assertThrows(java.io.IOException.class, () -> TlsPolicy.load(TlsPolicy.Mode.REQUIRE, null,
                certs.resolve("server.p12"), "wrong".toCharArray(), null, false));
    }

    private void ioOverTls(NbdServerConfig cfg) throws Exception {
        try (NbdServer server = new NbdServer(cfg, exports);
             RawNbd raw = new RawNbd(server.tcpAddress())) {
            raw.greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
            raw.option(OPT_STARTTLS, null);
            assertEquals(REP_ACK, raw.optionReply(null).type());
            SSLSocket tls = (SSLSocket) clientContext().getSocketFactory()
                    .createSocket(raw.ch.socket(), "localhost", server.tcpAddress().getPort(), true);
            tls.setUseClientMode(true);
            tls.startHandshake();
            OutputStream out = tls.getOutputStream();
            DataInputStream in = new DataInputStream(tls.getInputStream());
            ByteBuffer again = ByteBuffer.allocate(16);
            new io.rnbd.nbd.proto.OptionHeader(OPT_STARTTLS, 0).encode(again);
            out.write(again.array(), 0, again.position());
            OptionReplyHeader no = OptionReplyHeader.decode(ByteBuffer.wrap(in.readNBytes(OptionReplyHeader.SIZE)));
            in.readNBytes(no.length());
            assertEquals(REP_ERR_INVALID, no.type(), "TLS is on already");
            GoRequest g = new GoRequest("d", new int[0]);
            ByteBuffer b = ByteBuffer.allocate(16 + g.encodedSize());
            new io.rnbd.nbd.proto.OptionHeader(OPT_GO, g.encodedSize()).encode(b);
            g.encode(b);
            out.write(b.array(), 0, b.position());
            while (true) {
                ByteBuffer h = ByteBuffer.wrap(in.readNBytes(OptionReplyHeader.SIZE));
                OptionReplyHeader rh = OptionReplyHeader.decode(h);
                in.readNBytes(rh.length());
                if (rh.type() == REP_ACK) {
                    break;
                }
                assertEquals(REP_INFO, rh.type());
            }
            byte[] data = new byte[4096];
            java.util.Arrays.fill(data, (byte) 0x5a);
            ByteBuffer w = ByteBuffer.allocate(Request.SIZE + 4096);
            new Request(0, CMD_WRITE, 7, 8192, 4096).encode(w);
            w.put(data);
            out.write(w.array(), 0, w.position());
            SimpleReply r = SimpleReply.decode(ByteBuffer.wrap(in.readNBytes(SimpleReply.SIZE)));
            assertEquals(0, r.error());
            assertEquals(7, r.handle());
            assertArrayEquals(data, disk.snapshot(8192, 4096));
            ByteBuffer rd = ByteBuffer.allocate(Request.SIZE);
            new Request(0, CMD_READ, 8, 8192, 4096).encode(rd);
            out.write(rd.array(), 0, rd.position());
            SimpleReply rr = SimpleReply.decode(ByteBuffer.wrap(in.readNBytes(SimpleReply.SIZE)));
            assertEquals(8, rr.handle());
            assertArrayEquals(data, in.readNBytes(4096));
            tls.close();
        }
    }

    private SSLContext clientContext() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream ca = Files.newInputStream(certs.resolve("ca-cert.pem"))) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(ca));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    @Test
    void configurationMistakesAreRefusedWithTheReason() {
        IllegalArgumentException wide = assertThrows(IllegalArgumentException.class,
                () -> NbdServerConfig.of(new InetSocketAddress("0.0.0.0", 0), null));
        assertTrue(wide.getMessage().contains("tls=require"), wide.getMessage());
        assertThrows(IllegalArgumentException.class, () -> NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0),
                null).withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(-1)));
        IllegalArgumentException psk = assertThrows(IllegalArgumentException.class,
                () -> TlsPolicy.load(TlsPolicy.Mode.REQUIRE, certs, null, null, certs.resolve("keys.psk"), false));
        assertTrue(psk.getMessage().contains("TLS-PSK"), psk.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> TlsPolicy.load(TlsPolicy.Mode.REQUIRE, null, null, null, null, false));
        assertThrows(IllegalArgumentException.class, () -> TlsPolicy.parseMode("maybe"));
    }

    @Test
    void aWildcardListenerStartsWithTlsRequired() throws Exception {
        NbdServerConfig cfg = new NbdServerConfig(new InetSocketAddress("0.0.0.0", 0), null, 4, 16,
                32L * 1024 * 1024, Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ZERO,
                TlsPolicy.load(TlsPolicy.Mode.REQUIRE, certs, null, null, null, false), 0);
        try (NbdServer server = new NbdServer(cfg, exports);
             RawNbd raw = new RawNbd(new InetSocketAddress("127.0.0.1", server.tcpAddress().getPort()))) {
            raw.greet(FLAG_C_FIXED_NEWSTYLE);
            raw.option(OPT_LIST, null);
            assertEquals(REP_ERR_TLS_REQD, raw.optionReply(null).type());
        }
    }
}
