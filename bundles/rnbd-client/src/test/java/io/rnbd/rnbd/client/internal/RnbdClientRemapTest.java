package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static io.rnbd.rnbd.client.internal.RnbdEndToEndScenario.errnoOf;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.FakeRtrs;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeBackend;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A mapping the server refused is opened again by the client itself when the refusal may pass
 * ({@link RemapPolicy}), on the client's scheduler, here a fake one: the delays are the
 * policy's, not this machine's. FakeRtrs answers on threads of its own, so each step waits
 * until the device has settled (its answer in, the next reopen scheduled or not) before time
 * moves on; time moving runs only what is due, so "nothing happened" is checked at once.
 */
class RnbdClientRemapTest {
    private static final int MAX_IO = 124 * 1024;
    private final FakeScheduler clock = new FakeScheduler();
    private RnbdServer server;
    private FakeRtrs rtrs;
    private FakeRtrs.Client session;
    private RnbdClient client;

    @BeforeEach
    void setUp() {
        server = new RnbdServer(new FakeScheduler());
        server.backendAdded("memory", new FakeBackend());
        rtrs = new FakeRtrs(server);
        client = new RnbdClient(DevicePublisher.NONE, clock, 0);
        session = rtrs.connect("s1", "", 32, MAX_IO, true);
        client.sessionAdded(session);
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        assertEquals(0, clock.pending(), "closing the client cancels what was due");
        rtrs.close();
        assertEquals(0, rtrs.violations());
        server.close();
    }

    private static ExportConfig disk(Set<String> allowedSessions) {
        return new ExportConfig("disk", "memory", false, allowedSessions, 0, Map.of("size", "1048576"));
    }

    private DeviceState state() {
        return client.devices().get(0).state();
    }

    /** Waits until the device is in {@code state} with {@code due} reopens scheduled. */
    private void settled(DeviceState state, int due) {
        Await.until(() -> "device " + state() + " with " + clock.pending() + " due, waiting for " + state + " with "
                + due, () -> state() == state && clock.pending() == due, Await.TIMEOUT);
    }

    /** Moves time by {@code ms} and waits for the OPEN that was due then to be answered. */
    private void reopenAfter(long ms, DeviceState expected, int due) {
        int before = session.delivered();
        clock.advanceMillis(ms - 1);
        assertEquals(before, session.delivered(), "no OPEN before " + ms + " ms");
        clock.advanceMillis(1);
        Await.until("the reopen reached the server", () -> session.delivered() == before + 1);
        settled(expected, due);
    }

    @Test
    void anExportThatAppearsLaterIsMappedWithoutAnOperator() throws Exception {
        assertEquals(Errno.ENOENT, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 1);
        reopenAfter(1_000, DeviceState.FAILED, 1);
        assertEquals(Errno.ENOENT, client.devices().get(0).lastError());

        server.addExport(disk(Set.of()));
        reopenAfter(2_000, DeviceState.MAPPED, 0);
        assertEquals(0, client.devices().get(0).lastError());

        RemoteBlockDevice d = client.remap("rnbd0").get(10, TimeUnit.SECONDS);
        byte[] data = new byte[4096];
        data[7] = 42;
        assertEquals(0, errnoOf(d.write(8192, ByteBuffer.wrap(data), false)));
        ByteBuffer back = ByteBuffer.allocate(4096);
        assertEquals(0, errnoOf(d.read(8192, back)));
        assertArrayEquals(data, back.array());

        int after = session.delivered();
        clock.advance(Duration.ofMinutes(10));
        assertEquals(after, session.delivered(), "a mapped device is not opened again");
    }

    @Test
    void aFinalRefusalIsNotRetried() throws Exception {
        server.addExport(disk(Set.of("someone-else")));
        assertEquals(Errno.EACCES, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 0);
        int refused = session.delivered();
        clock.advance(Duration.ofMinutes(10));
        assertEquals(refused, session.delivered(), "EACCES is final: no OPEN without the operator");
        assertEquals(DeviceState.FAILED, state());
    }

    @Test
    void theDelayDoublesToAMinuteAndStaysThere() throws Exception {
        assertEquals(Errno.ENOENT, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 1);
        for (long ms : List.of(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 60_000L, 60_000L)) {
            reopenAfter(ms, DeviceState.FAILED, 1);
        }
    }

    @Test
    void anUnmapWhileAReopenIsDueCancelsIt() throws Exception {
        assertEquals(Errno.ENOENT, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 1);
        client.unmap("rnbd0", true);
        assertEquals(0, clock.pending());
        server.addExport(disk(Set.of()));
        int before = session.delivered();
        clock.advance(Duration.ofMinutes(10));
        assertEquals(before, session.delivered());
        assertTrue(client.devices().isEmpty());
        assertTrue(server.exports().get(0).openers().isEmpty(), "nothing opened on the server");
    }

    /** After being mapped, a refused reopen (the export gone for a while) starts again from the first delay. */
    @Test
    void aDeviceThatWasMappedStartsAgainFromTheFirstDelay() throws Exception {
        assertEquals(Errno.ENOENT, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 1);
        reopenAfter(1_000, DeviceState.FAILED, 1);
        server.addExport(disk(Set.of()));
        reopenAfter(2_000, DeviceState.MAPPED, 0);
        RemoteBlockDevice d = client.remap("rnbd0").get(10, TimeUnit.SECONDS);

        server.removeExport("disk");
        assertEquals(Errno.ENOENT, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
        settled(DeviceState.FAILED, 1);
        server.addExport(disk(Set.of()));
        reopenAfter(1_000, DeviceState.MAPPED, 0);
        assertEquals(0, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
        assertFalse(server.exports().get(0).openers().isEmpty());
    }

    /** A reconnect's OPEN refused while a reopen is due adds no second chain of reopens. */
    @Test
    void oneReopenIsDueAtATimeWhateverElseWasRefused() throws Exception {
        assertEquals(Errno.ENOENT, errnoOf(client.map("rnbd0", "s1", "disk", AccessMode.RW)));
        settled(DeviceState.FAILED, 1);
        int beforeReconnect = session.delivered();
        session.disconnect();
        session.reconnect();
        // SESS_INFO and the OPEN of the device, refused again
        Await.until("the reconnect's OPEN", () -> session.delivered() == beforeReconnect + 2);
        settled(DeviceState.FAILED, 1);
        reopenAfter(1_000, DeviceState.FAILED, 1);
        // the third refusal in a row: 4 s, and nothing at 2 s from a second chain
        reopenAfter(RemapPolicy.delayMs(3), DeviceState.FAILED, 1);
    }

    @Test
    void thePolicy() {
        for (int errno : new int[] {Errno.ENOENT, Errno.ENXIO, Errno.ENODEV, Errno.EBUSY, Errno.EAGAIN, Errno.EIO,
                Errno.ETIMEDOUT}) {
            assertTrue(RemapPolicy.retryable(errno), Errno.name(errno));
        }
        for (int errno : new int[] {Errno.EACCES, Errno.EPERM, Errno.EINVAL, Errno.EPROTO, Errno.EROFS, Errno.ENOKEY,
                Errno.EKEYREJECTED, Errno.EOPNOTSUPP}) {
            assertFalse(RemapPolicy.retryable(errno), Errno.name(errno));
        }
        assertEquals(1_000, RemapPolicy.delayMs(0));
        assertEquals(1_000, RemapPolicy.delayMs(1));
        assertEquals(32_000, RemapPolicy.delayMs(6));
        assertEquals(60_000, RemapPolicy.delayMs(7));
        assertEquals(60_000, RemapPolicy.delayMs(Integer.MAX_VALUE));
    }
}
