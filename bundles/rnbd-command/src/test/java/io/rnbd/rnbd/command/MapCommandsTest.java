package io.rnbd.rnbd.command;

import static io.rnbd.rnbd.command.FakeClientAdmin.device;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdClientAdmin.MapRequest;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rnbd:map, rnbd:unmap (faces of the client admin's operations: ClientAdminTest tests those), rnbd:devices. */
class MapCommandsTest {
    private final FakeClientAdmin client = new FakeClientAdmin();

    private MapCommand map(String dev, String session, String export) {
        MapCommand c = new MapCommand();
        c.admin = client;
        c.device = dev;
        c.session = session;
        c.export = export;
        return c;
    }

    private UnmapCommand unmap(String dev, boolean force) {
        UnmapCommand c = new UnmapCommand();
        c.admin = client;
        c.device = dev;
        c.force = force;
        return c;
    }

    @Test
    void mapPassesTheRequestAndPrintsTheOutcome() {
        MapCommand c = map("rnbd0", " a, b ", "/dev/ram0");
        c.mode = "migration";
        client.answer = "rnbd0 mapped: /dev/ram0 over a,b, MIGRATION, 1.0 GiB; active: a";
        assertEquals(client.answer + "\n", Out.run(c));
        assertEquals(List.of("mapDevice " + new MapRequest("rnbd0", List.of("a", "b"), "/dev/ram0",
                AccessMode.MIGRATION)), client.calls);
    }

    @Test
    void mapFailuresAreOneLineWithTheirErrno() {
        MapCommand mode = map("rnbd0", "s", "e");
        mode.mode = "rw+";
        assertEquals("Error: EINVAL: access mode must be RO, RW or MIGRATION, not 'rw+'\n", Out.run(mode));
        assertEquals("Error: --session and --export are required\n", Out.run(map("rnbd0", null, "e")));
        assertTrue(client.calls.isEmpty(), "nothing asked: " + client.calls);
        client.failOp = new BlockIoException(Errno.ENOENT, "rnbd0: the server refused to open nope");
        assertEquals("Error: ENOENT: rnbd0: the server refused to open nope\n", Out.run(map("rnbd0", "s", "nope")));
        MapCommand noClient = map("rnbd2", "s", "e");
        noClient.admin = null;
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(noClient));
    }

    @Test
    void unmapPassesForceAndPrintsTheOutcomeOrTheRefusal() {
        client.answer = "rnbd0 unmapped";
        assertEquals("rnbd0 unmapped\n", Out.run(unmap("rnbd0", true)));
        client.failOp = new BlockIoException(Errno.EBUSY, "rnbd0: rnbd0 is in use (rnbd:unmap --force rnbd0 unmaps "
                + "anyway)");
        assertEquals("Error: EBUSY: rnbd0: rnbd0 is in use (rnbd:unmap --force rnbd0 unmaps anyway)\n",
                Out.run(unmap("rnbd0", false)));
        assertEquals(List.of("unmapDevice rnbd0 true", "unmapDevice rnbd0 false"), client.calls);
        UnmapCommand noClient = unmap("rnbd9", false);
        noClient.admin = null;
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(noClient));
    }

    @Test
    void devicesTableAndJson() {
        client.put(device("rnbd0", DeviceState.MAPPED, 2, 0)).put(device("rnbd1", DeviceState.FAILED, 0, Errno.EACCES));
        io.rnbd.telemetry.api.Telemetry telemetry = SameAsTelemetry.over(null, null, null, null, client);
        DevicesCommand t = new DevicesCommand();
        t.admin = client;
        t.telemetry = telemetry;
        String out = Out.run(t);
        List<List<String>> cells = Out.cells(out);
        assertEquals(3, cells.size(), out);
        assertEquals(List.of("DEVICE", "SESSION", "EXPORT", "MODE", "SIZE", "STATE", "USERS", "ACTIVE", "READS",
                "WRITES", "ERRORS", "INFLIGHT", "LAST ERROR"), cells.get(0), out);
        assertEquals(List.of("rnbd0", "sess1", "vol1", "RW", "1.0 GiB", "mapped", "2", "-", "1", "2", "0", "3", ""),
                cells.get(1), out);
        assertEquals(List.of("rnbd1", "sess1", "vol1", "RW", "0 B", "failed", "0"), cells.get(2).subList(0, 7), out);
        assertEquals("EACCES (13)", cells.get(2).get(12), out);
        SameAsTelemetry.assertTable(out, SameAsTelemetry.table(telemetry, "rnbd_device"));
        DevicesCommand j = new DevicesCommand();
        j.admin = client;
        j.telemetry = telemetry;
        j.json = true;
        String json = Out.run(j);
        SameAsTelemetry.assertJson(json, SameAsTelemetry.table(telemetry, "rnbd_device"), null, 0);
        List<Map<String, Object>> devs = MiniJson.array(json);
        assertEquals("MAPPED", devs.get(0).get("state"));
        assertEquals(1073741824L, devs.get(0).get("size"));
        assertEquals(13L, devs.get(1).get("last_error"));
        assertEquals(Map.of("reads", 1L, "read_bytes", 4096L, "writes", 2L, "write_bytes", 8192L, "errors", 0L,
                "timeouts", 0L, "unknown", 0L, "inflight", 3L), devs.get(0).get("stats"));
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(new DevicesCommand()));
    }
}
