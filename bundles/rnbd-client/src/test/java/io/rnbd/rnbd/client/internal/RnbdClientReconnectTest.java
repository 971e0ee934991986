package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.FakeRtrs;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeBackend;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Session lifecycle under a mapping: appear late, drop, reconnect, go away; server force-close. */
class RnbdClientReconnectTest {
    private static final int MAX_IO = 124 * 1024;

    private RnbdServer server;
    private FakeRtrs rtrs;
    private RnbdClient client;

    @BeforeEach
    void setUp() {
        server = new RnbdServer(new FakeScheduler());
        server.backendAdded("memory", new FakeBackend());
        server.addExport(new ExportConfig("disk", "memory", false, Set.of(), 0, Map.of("size", "1048576")));
        rtrs = new FakeRtrs(server);
        client = new RnbdClient(DevicePublisher.NONE);
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        rtrs.close();
        assertEquals(0, rtrs.violations());
        server.close();
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    private static int errnoOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS);
            return 0;
        } catch (ExecutionException e) {
            return BlockIoException.errnoOf(e.getCause());
        }
    }

    private DeviceState state() {
        return client.devices().get(0).state();
    }

    private int serverDeviceId() {
        return server.exports().get(0).openers().get(0).deviceId();
    }

    private static byte[] random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] read(RemoteBlockDevice d, long off, int len) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(len);
        get(d.read(off, dst));
        return dst.array();
    }

    @Test
    void mappingWaitsForTheSessionToAppearAndConnect() throws Exception {
        CompletableFuture<RemoteBlockDevice> mapped = client.map("rnbd0", "s1", "disk", AccessMode.RW);
        assertEquals(DeviceState.PENDING, state());
        FakeRtrs.Client c = rtrs.connect("s1", "", 32, MAX_IO, true);
        c.disconnect();
        client.sessionAdded(c);
        assertFalse(mapped.isDone());
        assertEquals(DeviceState.PENDING, state());
        c.reconnect();
        RemoteBlockDevice d = get(mapped);
        assertEquals(1 << 20, d.size());
        assertEquals(DeviceState.MAPPED, state());
    }

    @Test
    void remapAfterReconnectAndIoQueuedMeanwhileLands() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1", "", 32, MAX_IO, true);
        client.sessionAdded(c);
        RemoteBlockDevice d = get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        int oldId = serverDeviceId();
        byte[] a = random(4096, 1);
        byte[] b = random(4096, 2);
        get(d.write(0, ByteBuffer.wrap(a), false));

        c.disconnect();
        assertEquals(DeviceState.DISCONNECTED, state());
        assertEquals(0, server.exports().get(0).openers().size(), "the server released the session");
        CompletableFuture<Void> queued = d.write(4096, ByteBuffer.wrap(b), true);
        assertFalse(queued.isDone());

        c.reconnect();
        assertEquals(0, errnoOf(queued), "the queued write lands on the remapped device");
        Await.until("remapped", () -> state() == DeviceState.MAPPED);
        assertNotEquals(oldId, serverDeviceId());
        assertArrayEquals(a, read(d, 0, 4096));
        assertArrayEquals(b, read(d, 4096, 4096));
        assertEquals(1, server.exports().get(0).openers().size());
    }

    @Test
    void ioFailsAtOnceWhileDownWhenTheTransportDoesNotQueue() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1", "", 32, MAX_IO, false);
        client.sessionAdded(c);
        RemoteBlockDevice d = get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        c.disconnect();
        assertEquals(Errno.EIO, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
        c.reconnect();
        Await.until("remapped", () -> state() == DeviceState.MAPPED);
        assertEquals(0, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
    }

    @Test
    void sessionServiceGoneAndBack() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1");
        client.sessionAdded(c);
        RemoteBlockDevice d = get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        c.close();
        client.sessionRemoved(c);
        assertEquals(DeviceState.PENDING, state());
        assertEquals(Errno.ENOTCONN, errnoOf(d.read(0, ByteBuffer.allocate(512))));

        client.sessionAdded(rtrs.connect("s1"));
        Await.until("remapped over the new session", () -> state() == DeviceState.MAPPED);
        assertEquals(0, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
    }

    /**
     * The server forgets the open while the session stays up (force-close; the same as a
     * restarted RNBD server): the next IO's ENXIO makes the client open again and resend, so
     * the IO succeeds and lands.
     */
    @Test
    void serverForgettingTheOpenIsFollowedByAReopen() throws Exception {
        client.sessionAdded(rtrs.connect("s1"));
        RemoteBlockDevice d = get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        int before = serverDeviceId();
        server.forceClose("disk", "s1");
        assertEquals(0, server.exports().get(0).openers().size());
        byte[] data = random(512, 3);
        assertEquals(0, errnoOf(d.write(4096, ByteBuffer.wrap(data), false)), "resent after the re-OPEN");
        assertEquals(DeviceState.MAPPED, state());
        assertEquals(1, server.exports().get(0).openers().size(), "open again on the server");
        assertTrue(serverDeviceId() != before, "under a new id");
        ByteBuffer back = ByteBuffer.allocate(512);
        assertEquals(0, errnoOf(d.read(4096, back)));
        assertArrayEquals(data, back.array());
    }

    /** If the server now refuses the OPEN, the device fails with that errno, and so does the IO. */
    @Test
    void aReopenTheServerRefusesFailsTheDevice() throws Exception {
        client.sessionAdded(rtrs.connect("s1"));
        RemoteBlockDevice d = get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        server.removeExport("disk");
        assertEquals(Errno.ENOENT, errnoOf(d.write(0, ByteBuffer.allocate(512), false)));
        assertEquals(DeviceState.FAILED, state());
        assertEquals(Errno.ENOENT, client.devices().get(0).lastError());
    }

    @Test
    void unmapWhileDisconnected() throws Exception {
        FakeRtrs.Client c = rtrs.connect("s1", "", 32, MAX_IO, true);
        client.sessionAdded(c);
        get(client.map("rnbd0", "s1", "disk", AccessMode.RW));
        c.disconnect();
        client.unmap("rnbd0", false);
        c.reconnect();
        assertEquals(0, client.devices().size());
        Await.until("nothing re-opened", () -> c.delivered() >= 3);
        assertEquals(0, server.exports().get(0).openers().size());
    }
}
