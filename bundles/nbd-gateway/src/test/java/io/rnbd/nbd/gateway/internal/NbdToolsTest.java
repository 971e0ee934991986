package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.nbd.gateway.testing.MapExports;
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

/** The gateway driven by the real NBD tools (libnbd-bin, qemu-utils, fio); skipped where missing. */
@Timeout(120)
class NbdToolsTest {
    private static final int SIZE = 64 * 1024 * 1024;
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private final ExecutorService completer = Executors.newFixedThreadPool(2);
    private FakeBlockDevice disk;
    private NbdServer server;
    private String uri;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        disk = new FakeBlockDevice(SIZE).limitingEveryRequest().completingOn(completer);
        MapExports exports = new MapExports().with("disk0", disk)
                .with("small", new FakeBlockDevice(1024 * 1024).limitingEveryRequest());
        server = new NbdServer(NbdServerConfig.of(new InetSocketAddress("127.0.0.1", 0), null), exports);
        uri = "nbd://127.0.0.1:" + server.tcpAddress().getPort() + "/disk0";
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        completer.shutdownNow();
        assertTrue(completer.awaitTermination(5, TimeUnit.SECONDS));
    }

    private Path randomFile(String name, int size) throws Exception {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        // A zero run in the middle lets the tools use WRITE_ZEROES / trim.
        java.util.Arrays.fill(b, size / 2, size / 2 + 4 * 1024 * 1024, (byte) 0);
        Path p = dir.resolve(name);
        Files.write(p, b);
        return p;
    }

    private static void assertOk(ExternalTools.Result r) {
        assertEquals(0, r.exit(), r.output());
    }

    @Test
    void nbdinfoListsExportsWithTheirSizes() throws Exception {
        assumeTrue(ExternalTools.installed("nbdinfo"), "nbdinfo not installed");
        ExternalTools.Result r = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--list", "--json",
                "nbd://127.0.0.1:" + server.tcpAddress().getPort());
        assertOk(r);
        String out = r.output();
        assertTrue(out.contains("\"export-name\": \"disk0\""), out);
        assertTrue(out.contains("\"export-name\": \"small\""), out);
        assertTrue(out.contains("\"export-size\": " + SIZE), out);
        assertTrue(out.contains("\"export-size\": 1048576"), out);
        ExternalTools.Result one = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", uri);
        assertOk(one);
        assertTrue(one.output().contains("can_multi_conn: true"), one.output());
        assertTrue(one.output().contains("block_size_minimum: 512"), one.output());
    }

    @Test
    void nbdinfoOverTheUnixSocket() throws Exception {
        assumeTrue(ExternalTools.installed("nbdinfo"), "nbdinfo not installed");
        Path sock = dir.resolve("nbd.sock");
        try (NbdServer unix = new NbdServer(NbdServerConfig.of(null, sock), new MapExports().with("disk0", disk))) {
            ExternalTools.Result r = ExternalTools.run(TOOL_TIMEOUT, "nbdinfo", "--size", "nbd+unix:///disk0?socket=" + sock);
            assertOk(r);
            assertEquals(String.valueOf(SIZE), r.output().trim());
        }
    }

    @Test
    void nbdcopyRoundTripsRandomData() throws Exception {
        assumeTrue(ExternalTools.installed("nbdcopy"), "nbdcopy not installed");
        Path src = randomFile("src.img", SIZE);
        Path back = dir.resolve("back.img");
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "nbdcopy", "--flush", src.toString(), uri));
        Files.write(back, new byte[0]);
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "nbdcopy", uri, back.toString()));
        assertEquals(-1, Files.mismatch(src, back), "nbdcopy round trip differs");
        assertArrayEquals(Files.readAllBytes(src), disk.snapshot(0, SIZE));
    }

    @Test
    void qemuImgConvertAndCompare() throws Exception {
        assumeTrue(ExternalTools.installed("qemu-img"), "qemu-img not installed");
        Path src = randomFile("src.img", 32 * 1024 * 1024);
        assertOk(ExternalTools.run(TOOL_TIMEOUT, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src.toString(), uri));
        ExternalTools.Result cmp = ExternalTools.run(TOOL_TIMEOUT, "qemu-img", "compare", "-f", "raw", "-F", "raw", src.toString(),
                "nbd://127.0.0.1:" + server.tcpAddress().getPort() + "/disk0");
        // The export is larger than the image: compare checks that the rest is zero, which it is.
        assertOk(cmp);
        assertTrue(cmp.output().contains("Images are identical"), cmp.output());
    }

    @Test
    void fioVerifiesCrc32cOverTheNbdEngine() throws Exception {
        assumeTrue(ExternalTools.installed("fio"), "fio not installed");
        ExternalTools.Result r = ExternalTools.run(TOOL_TIMEOUT, "fio", "--name=nbdgw", "--ioengine=nbd", "--uri=" + uri,
                "--rw=randwrite", "--bs=4k", "--size=16m", "--iodepth=32", "--verify=crc32c", "--do_verify=1",
                "--verify_fatal=1", "--verify_state_save=0"); // no state file in the module directory
        assertOk(r);
        assertTrue(r.output().contains("err= 0"), r.output());
        // The verify pass reads back all 16 MiB written.
        assertTrue(r.output().matches("(?s).*read: IOPS=.*\\(16\\.0MiB/.*"), r.output());
        assertTrue(r.output().matches("(?s).*write: IOPS=.*\\(16\\.0MiB/.*"), r.output());
    }
}
