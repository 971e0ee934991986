package io.rnbd.rnbd.server.internal;

import static io.rnbd.rnbd.server.internal.Wire.readNow;
import static io.rnbd.rnbd.server.internal.Wire.writeNow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.backend.file.internal.FileBackend;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.testkit.FakeScheduler;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exports on the real file backend: files that appear late and files that grow (issue 20 items 4 and 7). */
class FileExportTest {
    @TempDir
    Path dir;
    private final FakeScheduler scheduler = new FakeScheduler();
    private final RnbdServer server = new RnbdServer(scheduler);
    private final FileBackend files = new FileBackend(2);
    private FakeRtrs rtrs;

    @BeforeEach
    void setUp() {
        server.backendAdded("file", files);
        rtrs = new FakeRtrs(server);
    }

    @AfterEach
    void tearDown() throws Exception {
        rtrs.close();
        server.close();
        files.close();
    }

    private ExportInfo info(String name) {
        return server.exports().stream().filter(e -> e.name().equals(name)).findFirst().orElseThrow();
    }

    private static OpenRsp open(FakeRtrs.Client c, String name) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(OpenRsp.SIZE);
        assertEquals(0, readNow(c, new Open(AccessMode.RW, name), dst));
        return OpenRsp.decode(dst);
    }

    /** The tester's case: the export was added before its image file was copied in. */
    @Test
    void aFileExportComesOnlineWhenItsFileAppears() throws Exception {
        Path img = dir.resolve("late.img");
        server.addExport(new ExportConfig("late", "file", false, Set.of(), 0, Map.of("path", img.toString())));
        assertEquals(ExportState.OFFLINE, info("late").state());
        assertEquals("open failed: file backend: " + img + ": no such file (give size= to create it)",
                info("late").lastError());

        Files.write(img, new byte[1 << 20]);
        scheduler.advance(Duration.ofMillis(RnbdServer.DEFAULT_OPEN_RETRY_MS));
        assertEquals(ExportState.ONLINE, info("late").state(), info("late").lastError());
        assertEquals(1 << 20, info("late").size());
        assertEquals((1 << 20) / 512, open(rtrs.connect("s1"), "late").nsectors());
    }

    /**
     * A whole-file export grown from outside ({@code truncate -s}): the next OPEN answers the
     * new size, as Linux's rnbd-server reads bdev_nr_sectors for every OPEN_RSP, and IO
     * beyond the old end is served.
     */
    @Test
    void aFileGrownFromOutsideIsWhatTheNextOpenAnswers() throws Exception {
        Path img = dir.resolve("grow.img");
        Files.write(img, new byte[1 << 20]);
        server.addExport(new ExportConfig("grow", "file", false, Set.of(), 0, Map.of("path", img.toString())));
        FakeRtrs.Client c = rtrs.connect("s1");
        OpenRsp before = open(c, "grow");
        try (FileChannel ch = FileChannel.open(img, StandardOpenOption.WRITE)) {
            ch.truncate(4 << 20); // shrinks only; extend the way truncate -s does:
            ch.write(ByteBuffer.allocate(1), (4 << 20) - 1);
        }
        OpenRsp after = open(c, "grow");
        assertEquals((4 << 20) / 512, after.nsectors());
        assertEquals(before.deviceId(), after.deviceId());
        assertEquals(0, writeNow(c, Io.of(after.deviceId(), ((4 << 20) - 512) / 512, Io.OP_WRITE, 0, 512),
                ByteBuffer.allocate(512)));
        assertEquals(4 << 20, info("grow").size());
    }
}
