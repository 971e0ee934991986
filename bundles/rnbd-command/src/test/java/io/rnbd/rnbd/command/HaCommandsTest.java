package io.rnbd.rnbd.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceInfo;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdClientAdmin.HaDeviceInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.HaInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What an operator sees of devices and exports over several servers, and rnbd:failback. */
class HaCommandsTest {
    private static final long SINCE = 1_795_939_090_000L; // 2026-11-29T07:58:10Z

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    private static DeviceInfo haDevice() {
        return new DeviceInfo("rnbd0", "front-b", "vol", AccessMode.RW, 1L << 30, DeviceState.MAPPED, 1,
                new BlockIoStats(5, 20480, 6, 24576, 0, 0), 0,
                new HaDeviceInfo(List.of("front-a", "front-b"), "front-b", SINCE, 3, 1, 120, 402));
    }

    @Test
    void devicesShowsTheSessionsTheActiveOneSinceWhenAndTheStalls() {
        FakeClientAdmin client = new FakeClientAdmin().put(haDevice());
        DevicesCommand t = new DevicesCommand();
        t.admin = client;
        t.telemetry = SameAsTelemetry.over(null, null, null, null, client);
        String out = Out.run(t);
        assertEquals(List.of("rnbd0", "front-a,front-b", "vol", "RW", "1.0 GiB", "mapped", "1", "front-b since "
                + "2026-11-29T07:58:10Z (generation 3, 1 takeover, last stall 120 ms, longest 402 ms)", "5", "6"),
                Out.row(out, "rnbd0").subList(0, 10), out);
        DevicesCommand j = new DevicesCommand();
        j.admin = client;
        j.telemetry = t.telemetry;
        j.json = true;
        Map<String, Object> ha = asMap(MiniJson.array(Out.run(j)).get(0).get("ha"));
        assertEquals(List.of("front-a", "front-b"), ha.get("sessions"));
        assertEquals("front-b", ha.get("active"));
        assertEquals(SINCE, ha.get("active_since"));
        assertEquals(1L, ha.get("takeovers"));
        assertEquals(120L, ha.get("last_stall_ms"));
        assertEquals(402L, ha.get("max_stall_ms"));
    }

    @Test
    void exportsShowTheRoleAndWhoHoldsTheStorage() {
        FakeServerAdmin server = new FakeServerAdmin().put(new ExportInfo("vol", "rbd", 1L << 30, ExportState.ONLINE,
                false, List.of(), null, "", new HaInfo(Role.STANDBY, "A", SINCE, 4, 2, 131)));
        ExportsCommand t = new ExportsCommand();
        t.admin = server;
        t.telemetry = SameAsTelemetry.over(null, null, null, server, null);
        String out = Out.run(t);
        assertEquals(List.of("vol", "rbd", "1.0 GiB", "online", "no", "standby", "A since 2026-11-29T07:58:10Z "
                + "(generation 4, 2 takeovers here, last 131 ms)"), Out.row(out, "vol").subList(0, 7), out);
        ExportsCommand j = new ExportsCommand();
        j.admin = server;
        j.telemetry = t.telemetry;
        j.json = true;
        Map<String, Object> ha = asMap(MiniJson.array(Out.run(j)).get(0).get("ha"));
        assertEquals("STANDBY", ha.get("role"));
        assertEquals("A", ha.get("active_server"));
        assertEquals(4L, ha.get("generation"));
    }

    @Test
    void failbackMovesTheDeviceAndSaysWhere() {
        FakeClientAdmin client = new FakeClientAdmin().put(haDevice());
        FailbackCommand f = new FailbackCommand();
        f.admin = client;
        f.device = "rnbd0";
        String out = Out.run(f);
        assertTrue(out.startsWith("rnbd0: IO goes to session front-a; front-a since"), out);
        assertEquals(List.of("failback rnbd0 "), client.calls);

        client.put(FakeClientAdmin.device("rnbd1", DeviceState.MAPPED, 0, 0));
        FailbackCommand one = new FailbackCommand();
        one.admin = client;
        one.device = "rnbd1";
        assertEquals("Error: EINVAL: device rnbd1 is mapped over one server\n", Out.run(one));
    }
}
