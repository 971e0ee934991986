package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.nbd.gateway.testing.MapExports;
import io.rnbd.nbd.gateway.testing.TestCerts;
import io.rnbd.testkit.ExternalTools;
import io.rnbd.testkit.block.FakeBlockDevice;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway under tls=require driven by libnbd's nbdinfo and nbdcopy ({@code nbds://}, GnuTLS)
 * and qemu-img ({@code tls-creds-x509}); each test is skipped, with the reason, where its tool
 * or openssl (to issue the test certificates) is missing.
 */
@Timeout(120)
class NbdTlsToolsTest {
    private static final int SIZE = 32 * 1024 * 1024;
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private final ExecutorService completer = Executors.newFixedThreadPool(2);
    private FakeBlockDevice disk;
    private NbdServer server;
    private int port;

    @TempDir
    Path dir;
    private Path certs;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(ExternalTools.installed("openssl"), "openssl (to issue test certificates) not installed");
        certs = Files.createDirectory(dir.resolve("pki"));
        TestCerts.make(certs);
        disk = new FakeBlockDevice(SIZE).limitingEveryRequest().completingOn(completer);
        server = new NbdServer(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withTls(TlsPolicy.load(TlsPolicy.Mode.REQUIRE, certs, null, null, null, false)),
                new MapExports().with("disk0", disk));
        port = server.tcpAddress().getPort();
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        completer.shutdownNow();
        assertTrue(completer.awaitTermination(5, TimeUnit.SECONDS));
    }

    /** libnbd checks the server's name against its certificate: localhost is in the SAN. */
    private String nbds(Path clientCerts) {
        return "nbds://localhost:" + port + "/disk0?tls-certificates=" + clientCerts;
    }

    private static void assertOk(ExternalTools.Result r) {
        assertEquals(0, r.exit(), r.output());
    }

    @Test
    void nbdinfoOverTlsAndRefusedWithout() throws Exception {
        assumeTrue(ExternalTools.installed("nbdinfo"), "nbdinfo not installed");
        Path ca = TestCerts.caOnly(certs, dir.resolve("ca"));
        ExternalTools.Result r = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--json", nbds(ca));
        assertOk(r);
        assertTrue(r.output().contains("\"export-size\": " + SIZE), r.output());
        // nbdinfo reports whether TLS was negotiated (nbd_get_tls_negotiated).
        assertTrue(r.output().contains("\"TLS\": true"), r.output());
        ExternalTools.Result plain = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "nbd://127.0.0.1:" + port + "/disk0");
        assertNotEquals(0, plain.exit(), "a plaintext client must be refused under tls=require: " + plain.output());
        ExternalTools.Result list = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--list", "nbd://127.0.0.1:" + port);
        assertFalse(list.output().contains("disk0"), "exports listed without TLS: " + list.output());
    }

    @Test
    void nbdinfoRefusesAServerItCannotVerify() throws Exception {
        assumeTrue(ExternalTools.installed("nbdinfo"), "nbdinfo not installed");
        // A CA that did not sign the server's certificate: the server's identity is what TLS proves.
        Path other = Files.createDirectory(dir.resolve("other"));
        TestCerts.make(other);
        ExternalTools.Result r = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", nbds(TestCerts.caOnly(other, dir.resolve("other-ca"))));
        assertNotEquals(0, r.exit(), r.output());
    }

    @Test
    void nbdcopyRoundTripsOverTls() throws Exception {
        assumeTrue(ExternalTools.installed("nbdcopy"), "nbdcopy not installed");
        Path ca = TestCerts.caOnly(certs, dir.resolve("ca"));
        byte[] b = new byte[SIZE];
        new Random(7).nextBytes(b);
        Path src = dir.resolve("src.img");
        Files.write(src, b);
        Path back = dir.resolve("back.img");
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "nbdcopy", "--flush", src.toString(), nbds(ca)));
        Files.write(back, new byte[0]);
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "nbdcopy", nbds(ca), back.toString()));
        assertEquals(-1, Files.mismatch(src, back), "nbdcopy round trip over TLS differs");
        assertArrayEquals(b, disk.snapshot(0, SIZE));
    }

    @Test
    void qemuImgConvertAndCompareOverTls() throws Exception {
        assumeTrue(ExternalTools.installed("qemu-img"), "qemu-img not installed");
        Path ca = TestCerts.caOnly(certs, dir.resolve("ca"));
        byte[] b = new byte[16 * 1024 * 1024];
        new Random(11).nextBytes(b);
        Path src = dir.resolve("q.img");
        Files.write(src, b);
        String creds = "tls-creds-x509,id=tls0,endpoint=client,dir=" + ca;
        String target = "driver=nbd,server.type=inet,server.host=localhost,server.port=" + port
                + ",export=disk0,tls-creds=tls0";
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "qemu-img", "convert", "-n", "--object", creds, "-f", "raw",
                "--target-image-opts", src.toString(), target));
        ExternalTools.Result cmp = ExternalTools.run(TOOL_TIMEOUT, "qemu-img", "compare", "--object", creds, "--image-opts",
                "driver=raw,file.filename=" + src, "driver=raw,file." + target.replace(",", ",file."));
        assertOk(cmp);
        assertTrue(cmp.output().contains("Images are identical"), cmp.output());
        assertArrayEquals(b, disk.snapshot(0, b.length));
        ExternalTools.Result plain = ExternalTools.run(TOOL_TIMEOUT, "qemu-img", "info", "nbd://127.0.0.1:" + port + "/disk0");
        assertNotEquals(0, plain.exit(), "qemu-img without TLS must be refused: " + plain.output());
    }

    @Test
    void clientCertificatesWhenVerifyPeerIsOn() throws Exception {
        assumeTrue(ExternalTools.installed("nbdinfo"), "nbdinfo not installed");
        server.close();
        server = new NbdServer(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null)
                .withTls(TlsPolicy.load(TlsPolicy.Mode.REQUIRE, certs, null, null, null, true)),
                new MapExports().with("disk0", disk));
        port = server.tcpAddress().getPort();
        // libnbd presents client-cert.pem / client-key.pem from the same directory when present.
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--size", nbds(certs)));
        ExternalTools.Result anonymous = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--size",
                nbds(TestCerts.caOnly(certs, dir.resolve("ca"))));
        assertNotEquals(0, anonymous.exit(), "a client without a certificate got in: " + anonymous.output());
    }
}
