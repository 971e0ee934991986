package io.rnbd.rnbd.client.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceResult;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdClientAdmin.MapRequest;
import io.rnbd.testkit.cm.FakeConfigAdmin;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * map/unmap/remap/resize as the operator runs them: checked input, the mapping configuration,
 * the wait for the outcome on fake time, the configuration taken back when the client never
 * took it. The client is a fake that MapComponent's part (a configuration becomes a device)
 * is played for by the ConfigAdmin's update hook.
 */
class ClientAdminTest {
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private final FakeClient client = new FakeClient();
    private long now;
    private final ClientAdmin admin = new ClientAdmin(client, ca, () -> now, ms -> now += ms * 1_000_000, 5000, 50);
    /** What a new mapping becomes; null: the client never takes it (its component failed). */
    private DeviceState outcome = DeviceState.MAPPED;
    private int outcomeErrno;

    {
        ca.onUpdate = c -> {
            if (MapComponent.PID.equals(c.factoryPid) && outcome != null) {
                client.devices.put((String) c.get("device.name"), new DeviceInfo((String) c.get("device.name"),
                        (String) c.get("session.name"), (String) c.get("export.name"),
                        AccessMode.valueOf((String) c.get("access.mode")), outcome == DeviceState.MAPPED ? 1L << 30 : 0,
                        outcome, 0, BlockIoStats.ZERO, outcomeErrno));
            }
        };
    }

    private static int errno(Executable e) {
        return assertThrows(BlockIoException.class, e).errno();
    }

    @Test
    void aMappingIsKeptInItsConfigurationAndReported() throws IOException {
        DeviceResult r = admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "/dev/ram0", "ro"));
        assertEquals("rnbd0 mapped: /dev/ram0 over sess1, RO, 1.0 GiB", r.message());
        assertEquals(DeviceState.MAPPED, r.device().state());
        FakeConfigAdmin.Conf conf = ca.of(MapComponent.PID).get(0);
        assertEquals("?", conf.location, "bound by whichever bundle owns the PID");
        assertEquals(Map.of("device.name", "rnbd0", "session.name", "sess1", "export.name", "/dev/ram0",
                "access.mode", "RO", "service.pid", conf.pid, "service.factoryPid", MapComponent.PID),
                Map.copyOf(new HashMap<>(conf.props)));
        assertEquals(0, now, "no wait once mapped");
    }

    @Test
    void badInputIsEinvalAndConfiguresNothing() {
        assertEquals(Errno.EINVAL, errno(() -> MapRequest.parse("rnbd0", "s", "e", "rw2")));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd 0", "s", "e", "RW"))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(new MapRequest("rnbd0", List.of(), "e", null))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "s", null, "RW"))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "a,a", "e", "RW"))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "a,b", "e", "RO"))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "a,", "e", "RW"))));
        assertEquals(Errno.EINVAL, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "s", "e)(x=*", "RW"))));
        assertTrue(ca.configs.isEmpty(), ca.configs.toString());
    }

    @Test
    void aMappingTheClientNeverTakesIsTakenBack() {
        outcome = null;
        BlockIoException e = assertThrows(BlockIoException.class,
                () -> admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "vol1", "RW")));
        assertEquals(Errno.ETIMEDOUT, e.errno());
        assertEquals("ETIMEDOUT: rnbd0: the RNBD client did not take the mapping within 5000 ms (see the log); "
                + "nothing was configured", e.getMessage());
        assertTrue(ca.configs.isEmpty(), "rolled back: " + ca.configs);
        assertTrue(now >= 5000L * 1_000_000, "waited the whole settle time");
    }

    @Test
    void aRefusedOpenCarriesTheServersErrnoAndTheMappingStays() {
        outcome = DeviceState.FAILED;
        outcomeErrno = Errno.ENOENT;
        BlockIoException e = assertThrows(BlockIoException.class,
                () -> admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "nope", null)));
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals("ENOENT: rnbd0: the server refused to open nope; the mapping stays configured and the client "
                + "opens it again by itself, at least once a minute, rnbd:unmap rnbd0 drops it", e.getMessage());
        assertEquals(1, ca.of(MapComponent.PID).size());
    }

    @Test
    void aMappingWaitingForItsSessionIsReportedAsSuch() throws IOException {
        outcome = DeviceState.PENDING;
        assertEquals("rnbd0 pending: waiting for session sess1; it maps when the session connects",
                admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "vol1", "RW")).message());
        assertEquals(1, ca.of(MapComponent.PID).size());
    }

    @Test
    void aDeviceOrAnExportOverASessionIsMappedOnce() throws IOException {
        ca.existing(MapComponent.PID, Map.of("device.name", "rnbd0", "session.name", "s", "export.name", "x",
                "access.mode", "RW")); // from etc/, not taken by the client (yet)
        assertEquals(Errno.EEXIST, errno(() -> admin.mapDevice(MapRequest.parse("rnbd0", "s", "vol1", "RW"))));
        admin.mapDevice(MapRequest.parse("rnbd1", "sess1", "vol1", "RW"));
        BlockIoException e = assertThrows(BlockIoException.class,
                () -> admin.mapDevice(MapRequest.parse("rnbd2", "sess1", "vol1", "RW")));
        assertEquals("EEXIST: export vol1 is already mapped over session sess1 as rnbd1", e.getMessage());
        assertEquals(2, ca.of(MapComponent.PID).size());
    }

    @Test
    void unmapRemovesTheConfigurationOnlyOnceTheClientLetGo() throws IOException {
        admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "vol1", "RW"));
        client.busy = true;
        BlockIoException e = assertThrows(BlockIoException.class, () -> admin.unmapDevice("rnbd0", false));
        assertEquals("EBUSY: rnbd0: rnbd0 is in use (rnbd:unmap --force rnbd0 unmaps anyway)", e.getMessage());
        assertEquals(1, ca.of(MapComponent.PID).size(), "a refusal keeps the configuration");
        DeviceResult r = admin.unmapDevice("rnbd0", true);
        assertEquals("rnbd0 unmapped", r.message());
        assertNull(r.device());
        assertTrue(ca.configs.isEmpty());
        assertEquals(List.of("unmap rnbd0 false", "unmap rnbd0 true"), client.calls);
        assertEquals("ENOENT: no mapped device 'rnbd0' (no device is mapped)",
                assertThrows(BlockIoException.class, () -> admin.unmapDevice("rnbd0", false)).getMessage());
    }

    @Test
    void unmapDropsAConfigurationTheClientNeverTook() throws IOException {
        outcome = null;
        ca.existing(MapComponent.PID, Map.of("device.name", "rnbd0", "session.name", "s", "export.name", "x"));
        assertEquals("rnbd0 unmapped", admin.unmapDevice("rnbd0", false).message());
        assertTrue(ca.configs.isEmpty());
        assertTrue(client.calls.isEmpty(), "nothing to unmap in the client");
    }

    @Test
    void remapAndResizeWaitForTheServersAnswer() throws IOException {
        admin.mapDevice(MapRequest.parse("rnbd0", "sess1", "vol1", "RW"));
        assertEquals("rnbd0 remapped: mapped, 1.0 GiB", admin.remapDevice("rnbd0").message());
        DeviceResult r = admin.resizeDevice("rnbd0");
        assertEquals(2L << 30, r.size());
        assertEquals("rnbd0: 2.0 GiB (2147483648 bytes)", r.message());
        client.answer = CompletableFuture.failedFuture(new BlockIoException(Errno.ENOENT, "export vol1 is gone"));
        BlockIoException e = assertThrows(BlockIoException.class, () -> admin.resizeDevice("rnbd0"));
        assertEquals("ENOENT: rnbd0: export vol1 is gone", e.getMessage());
        client.answer = new CompletableFuture<>(); // never answered
        e = assertThrows(BlockIoException.class, () -> admin.remapDevice("rnbd0"));
        assertEquals("ETIMEDOUT: rnbd0: no answer within 50 ms (rnbd0 is mapped)", e.getMessage());
        assertEquals(Errno.ENOENT, errno(() -> admin.remapDevice("rnbd9")));
        assertEquals(Errno.EINVAL, errno(() -> admin.resizeDevice("a b")));
    }

    /** The running client: devices by name, unmap refused while busy, remap/resize answers. */
    private static final class FakeClient implements RnbdClientAdmin {
        final Map<String, DeviceInfo> devices = new TreeMap<>();
        final List<String> calls = new ArrayList<>();
        boolean busy;
        /** The next remap/resize answer; null: success. */
        CompletableFuture<?> answer;

        @Override
        public List<DeviceInfo> devices() {
            return List.copyOf(devices.values());
        }

        @Override
        public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export,
                AccessMode mode) {
            throw new UnsupportedOperationException("mapDevice goes through ConfigAdmin");
        }

        @Override
        public void unmap(String device, boolean force) throws IOException {
            calls.add("unmap " + device + " " + force);
            if (busy && !force) {
                throw new BlockIoException(Errno.EBUSY, device + " is in use");
            }
            devices.remove(device);
        }

        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<RemoteBlockDevice> remap(String device) {
            return answer != null ? (CompletableFuture<RemoteBlockDevice>) answer
                    : CompletableFuture.completedFuture(null);
        }

        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<Long> resize(String device) {
            return answer != null ? (CompletableFuture<Long>) answer : CompletableFuture.completedFuture(2L << 30);
        }
    }
}
