package io.rnbd.rnbd.command;

import static io.rnbd.rnbd.command.FakeClientAdmin.device;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rnbd:map, rnbd:unmap, rnbd:devices over a fake ConfigAdmin and client. */
class MapCommandsTest {
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private final FakeClientAdmin client = new FakeClientAdmin();
    /** The state the fake client reaches for a new mapping, as MapComponent + the server decide it. */
    private DeviceState outcome = DeviceState.MAPPED;
    private int outcomeErrno;

    {
        ca.onUpdate = c -> {
            if (Configs.MAP_PID.equals(c.factoryPid)) {
                client.put(new DeviceInfo((String) c.get("device.name"), (String) c.get("session.name"),
                        (String) c.get("export.name"), AccessMode.valueOf((String) c.get("access.mode")),
                        outcome == DeviceState.MAPPED ? 1L << 30 : 0, outcome, 0, BlockIoStats.ZERO, outcomeErrno));
            }
        };
    }

    private MapCommand map(String dev, String session, String export) {
        MapCommand c = new MapCommand();
        c.configAdmin = ca;
        c.admin = client;
        c.device = dev;
        c.session = session;
        c.export = export;
        c.waitMillis = 0;
        return c;
    }

    private UnmapCommand unmap(String dev, boolean force) {
        UnmapCommand c = new UnmapCommand();
        c.configAdmin = ca;
        c.admin = client;
        c.device = dev;
        c.force = force;
        return c;
    }

    @Test
    void exportNamesMayBePaths() {
        assertEquals("rnbd0 mapped: /dev/ram0 over sess1, RW, 1.0 GiB\n", Out.run(map("rnbd0", "sess1", "/dev/ram0")));
    }

    @Test
    void mapStoresTheMappingAndReportsIt() {
        MapCommand c = map("rnbd0", "sess1", "vol1");
        c.mode = "ro";
        assertEquals("rnbd0 mapped: vol1 over sess1, RO, 1.0 GiB\n", Out.run(c));
        FakeConfigAdmin.Conf conf = ca.of(Configs.MAP_PID).get(0);
        assertEquals("?", conf.location);
        assertEquals(Map.of("device.name", "rnbd0", "session.name", "sess1", "export.name", "vol1",
                "access.mode", "RO", "service.pid", conf.pid, "service.factoryPid", Configs.MAP_PID),
                Map.copyOf(new java.util.HashMap<>(conf.props)));
    }

    @Test
    void aRefusedOpenIsAnErrorLineAndTheMappingStays() {
        outcome = DeviceState.FAILED;
        outcomeErrno = Errno.ENOENT;
        assertEquals("Error: rnbd0: the server refused to open nope: ENOENT (2); the mapping stays configured: "
                + "rnbd:remap rnbd0 retries, rnbd:unmap rnbd0 drops it\n", Out.run(map("rnbd0", "sess1", "nope")));
        assertEquals(1, ca.of(Configs.MAP_PID).size());
    }

    @Test
    void aMappingWaitingForItsSessionSaysSo() {
        outcome = DeviceState.PENDING;
        assertEquals("rnbd0 pending: waiting for session sess9; it maps when the session connects\n",
                Out.run(map("rnbd0", "sess9", "vol1")));
        ca.onUpdate = c -> {
        };
        assertEquals("Error: rnbd1: the RNBD client did not take the mapping within 0 ms (see the log); "
                + "nothing was configured\n", Out.run(map("rnbd1", "sess9", "vol2")));
        MapCommand noClient = map("rnbd2", "s", "e");
        noClient.admin = null;
        assertEquals("rnbd2 configured; the RNBD client is not running (bundle rnbd-client), it maps rnbd2 when it "
                + "starts\n", Out.run(noClient));
        assertEquals(2, ca.of(Configs.MAP_PID).size());
    }

    @Test
    void badArgumentsAndTakenNamesAreOneLine() {
        MapCommand mode = map("rnbd0", "s", "e");
        mode.mode = "rw+";
        assertEquals("Error: access mode must be RO, RW or MIGRATION, not 'rw+'\n", Out.run(mode));
        assertEquals("Error: device 'rnbd 0' is not a valid name (letters, digits and . _ : @ -, at most 254)\n",
                Out.run(map("rnbd 0", "s", "e")));
        assertEquals("Error: export '' is not a valid name (letters, digits and . _ : @ / -, at most 254)\n",
                Out.run(map("rnbd0", "s", "")));
        assertEquals("Error: --session and --export are required\n", Out.run(map("rnbd0", null, "e")));
        assertTrue(ca.configs.isEmpty());

        client.put(device("rnbd5", DeviceState.MAPPED, 0, 0));
        assertEquals("Error: device 'rnbd5' is already mapped (export vol1 over session sess1)\n",
                Out.run(map("rnbd5", "s", "e")));
        assertEquals("Error: export vol1 is already mapped over session sess1 as rnbd5\n",
                Out.run(map("rnbd7", "sess1", "vol1")));
        ca.existing(Configs.MAP_PID, Map.of("device.name", "rnbd6", "session.name", "s", "export.name", "e",
                "access.mode", "RW"));
        client.devices.remove("rnbd6");
        assertEquals("Error: device 'rnbd6' is already mapped\n", Out.run(map("rnbd6", "s", "e")));
        assertEquals(1, ca.configs.size());
    }

    @Test
    void unmapInUseIsRefusedAndKeepsTheConfiguration() {
        Out.run(map("rnbd0", "sess1", "vol1"));
        client.put(device("rnbd0", DeviceState.MAPPED, 1, 0));
        assertEquals("Error: rnbd0: EBUSY: rnbd0 is in use (rnbd:unmap --force rnbd0 unmaps anyway)\n",
                Out.run(unmap("rnbd0", false)));
        assertEquals(1, ca.configs.size());
        assertEquals("rnbd0 unmapped\n", Out.run(unmap("rnbd0", true)));
        assertTrue(ca.configs.isEmpty());
        assertTrue(client.devices.isEmpty());
        assertEquals(List.of("unmap rnbd0 false", "unmap rnbd0 true"), client.calls);
    }

    @Test
    void unmapOfAConfigurationTheClientDoesNotKnowOrOfNothing() {
        ca.existing(Configs.MAP_PID, Map.of("device.name", "rnbd3", "session.name", "s", "export.name", "e",
                "access.mode", "RW"));
        client.devices.clear();
        assertEquals("rnbd3 unmapped\n", Out.run(unmap("rnbd3", false)));
        assertTrue(ca.configs.isEmpty());
        assertTrue(client.calls.isEmpty());

        client.put(device("rnbd1", DeviceState.MAPPED, 0, 0));
        assertEquals("Error: no mapped device 'rnbd9' (devices: rnbd1)\n", Out.run(unmap("rnbd9", false)));
        UnmapCommand noClient = unmap("rnbd9", false);
        noClient.admin = null;
        assertEquals("Error: no mapped device 'rnbd9'\n", Out.run(noClient));
    }

    @Test
    void devicesTableAndJson() {
        client.put(device("rnbd0", DeviceState.MAPPED, 2, 0)).put(device("rnbd1", DeviceState.FAILED, 0, Errno.EACCES));
        DevicesCommand t = new DevicesCommand();
        t.admin = client;
        List<String> lines = Out.run(t).lines().toList();
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(1).matches("rnbd0\\s+sess1\\s+vol1\\s+RW\\s+1.0 GiB\\s+mapped\\s+2\\s+1\\s+2\\s+0\\s+3"),
                lines.get(1));
        assertTrue(lines.get(2).matches("rnbd1\\s+sess1\\s+vol1\\s+RW\\s+0 B\\s+failed\\s+0.*EACCES \\(13\\)"),
                lines.get(2));
        DevicesCommand j = new DevicesCommand();
        j.admin = client;
        j.json = true;
        List<Map<String, Object>> devs = MiniJson.array(Out.run(j));
        assertEquals("MAPPED", devs.get(0).get("state"));
        assertEquals(1073741824L, devs.get(0).get("size"));
        assertEquals(13L, devs.get(1).get("last_error"));
        assertEquals(Map.of("reads", 1L, "read_bytes", 4096L, "writes", 2L, "write_bytes", 8192L, "errors", 0L,
                "unknown", 0L, "inflight", 3L), devs.get(0).get("stats"));
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(new DevicesCommand()));
    }
}
