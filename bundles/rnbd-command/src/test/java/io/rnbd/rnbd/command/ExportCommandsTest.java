package io.rnbd.rnbd.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportRequest;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.Opener;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * rnbd:exports, rnbd:backends, and rnbd:export-add/remove/resize as faces of the server admin's
 * operations (ServerAdminTest tests those).
 */
class ExportCommandsTest {
    private final FakeServerAdmin server = new FakeServerAdmin();

    private ExportAddCommand add(String name, String backend) {
        ExportAddCommand c = new ExportAddCommand();
        c.admin = server;
        c.name = name;
        c.backend = backend;
        return c;
    }

    private ExportRemoveCommand remove(String name) {
        ExportRemoveCommand c = new ExportRemoveCommand();
        c.admin = server;
        c.name = name;
        return c;
    }

    @Test
    void addPassesTheOptionsAsOneRequest() {
        ExportAddCommand c = add("disk", "file");
        c.path = "/var/lib/rnbd/disk.img";
        c.create = true;
        c.size = "64m";
        c.readOnly = true;
        c.allowedSessions = "a, b,,";
        c.offlineWaitMs = "5000";
        c.params = List.of("cache=none", " sync = true ");
        server.answer = "export disk added: online, file, 64.0 MiB, read-only";
        assertEquals(server.answer + "\n", Out.run(c));
        assertEquals(List.of("addExport " + new ExportRequest("disk", "file", Map.of("path", "/var/lib/rnbd/disk.img",
                "create", "true", "size", "64m", "cache", "none", "sync", "true"), true, List.of("a", "b"), 5000L)),
                server.calls);
    }

    @Test
    void whatTheServiceSaysInConfigurationWordsIsPrintedInFlags() {
        server.answer = "export disk added: offline, file, 0 B (file backend: /nowhere/disk.img: no such file "
                + "(give size= to create it))";
        ExportAddCommand c = add("disk", "file");
        c.path = "/nowhere/disk.img";
        assertEquals("export disk added: offline, file, 0 B (file backend: /nowhere/disk.img: no such file"
                + " (give --size to create it))\n", Out.run(c));
        server.failOp = new BlockIoException(Errno.EINVAL, "path= and create=true are for the file backend");
        assertEquals("Error: EINVAL: --path and --create are for the file backend\n", Out.run(c));
        server.failOp = new BlockIoException(Errno.EEXIST, "export 'disk' already exists");
        assertEquals("Error: EEXIST: export 'disk' already exists\n", Out.run(c));
    }

    @Test
    void badOptionsAreOneLineAndAskNothing() {
        Map<String, ExportAddCommand> cases = new java.util.LinkedHashMap<>();
        ExportAddCommand param = add("v", "memory");
        param.params = List.of("size");
        cases.put("Error: EINVAL: a parameter is KEY=VALUE (a key of letters, digits and . _ -), not 'size'", param);
        ExportAddCommand twice = add("v", "memory");
        twice.size = "1m";
        twice.params = List.of("size=2m");
        cases.put("Error: size is given both as an option and as --param", twice);
        ExportAddCommand wait = add("v", "memory");
        wait.offlineWaitMs = "-1";
        cases.put("Error: --offline-wait-ms must be a number of milliseconds >= 0, not '-1'", wait);
        ExportAddCommand waitText = add("v", "memory");
        waitText.offlineWaitMs = "soon";
        cases.put("Error: --offline-wait-ms must be a number of milliseconds >= 0, not 'soon'", waitText);
        ExportAddCommand noServer = add("v", "memory");
        noServer.admin = null;
        cases.put("Error: the RNBD server is not running (bundle rnbd-server)", noServer);
        cases.forEach((expected, c) -> assertEquals(expected + "\n", Out.run(c)));
        assertTrue(server.calls.isEmpty(), server.calls.toString());
    }

    @Test
    void removePassesForceAndPrintsTheOutcomeOrTheRefusal() {
        server.answer = "export vol1 removed";
        ExportRemoveCommand force = remove("vol1");
        force.force = true;
        assertEquals("export vol1 removed\n", Out.run(force));
        server.failOp = new BlockIoException(Errno.EBUSY, "export 'vol1' is open by s1; use --force");
        assertEquals("Error: EBUSY: export 'vol1' is open by s1; use --force\n", Out.run(remove("vol1")));
        assertEquals(List.of("removeExport vol1 true", "removeExport vol1 false"), server.calls);
    }

    @Test
    void theBackendsHintsNameTheConsolesFlags() {
        assertEquals("file backend: /x: is empty (give --size and --create to extend it)",
                ConsoleWords.flags("file backend: /x: is empty (give size= and create=true to extend it)"));
        assertEquals("file backend: /x: is 512 bytes, smaller than size=4096 (--create extends it)",
                ConsoleWords.flags("file backend: /x: is 512 bytes, smaller than size=4096 (create=true extends it)"));
        assertEquals("rbd backend: no such image (give create.size= to create it)",
                ConsoleWords.flags("rbd backend: no such image (give create.size= to create it)"));
    }

    @Test
    void backendsTableAndJson() {
        server.backends.add(new Provider("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", 71, 0,
                List.of("mine")));
        BackendsCommand t = new BackendsCommand();
        t.admin = server;
        t.telemetry = SameAsTelemetry.over(null, null, null, server, null);
        String out = Out.run(t);
        List<List<String>> cells = Out.cells(out);
        assertEquals(4, cells.size(), out);
        assertEquals(List.of("NAME", "BUNDLE", "VERSION", "ID", "RANKING", "EXPORTS"), cells.get(0), out);
        assertEquals(List.of("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", "71", "0", "mine"),
                cells.get(3), out);
        BackendsCommand j = new BackendsCommand();
        j.admin = server;
        j.telemetry = t.telemetry;
        j.json = true;
        assertEquals(Map.of("name", "simple-file", "bundle", "org.example.rnbd.backend.simplefile", "version", "1.0.0",
                "bundle_id", 71L, "ranking", 0L, "exports", List.of("mine")), MiniJson.array(Out.run(j)).get(2));
        SameAsTelemetry.assertJson(Out.run(j), SameAsTelemetry.table(t.telemetry, "rnbd_backend"), null, 0);
        server.backends.clear();
        assertEquals("no block backend registered: exports stay offline until one is\n", Out.run(t));
        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(new BackendsCommand()));
    }

    @Test
    void exportsTableAndJson() {
        server.put(new ExportInfo("vol\"1", "memory", 1L << 30, ExportState.ONLINE, false,
                List.of(new Opener("s1", AccessMode.RW, 0), new Opener("s2", AccessMode.RO, 3)),
                new BlockIoStats(10, 40960, 20, 81920, 1, 2), ""));
        server.put(new ExportInfo("zz", "file", 0, ExportState.OFFLINE, true, List.of(), null, "backend gone"));
        ExportsCommand t = new ExportsCommand();
        t.admin = server;
        t.telemetry = SameAsTelemetry.over(null, null, null, server, null);
        String out = Out.run(t);
        List<List<String>> cells = Out.cells(out);
        assertEquals(3, cells.size(), out);
        assertEquals(List.of("vol\"1", "memory", "1.0 GiB", "online", "no", "-", "-", "s1:RW,s2:RO", "10", "20", "1",
                "2", ""), cells.get(1), out);
        assertEquals(List.of("zz", "file", "0 B", "offline", "yes", "-", "-", "", "0", "0", "0", "0", "backend gone"),
                cells.get(2), out);
        SameAsTelemetry.assertTable(out, SameAsTelemetry.table(t.telemetry, "rnbd_export"));

        ExportsCommand j = new ExportsCommand();
        j.admin = server;
        j.telemetry = t.telemetry;
        j.json = true;
        String json = Out.run(j);
        SameAsTelemetry.assertJson(json, SameAsTelemetry.table(t.telemetry, "rnbd_export"), "openers", 0);
        SameAsTelemetry.assertNested(json, SameAsTelemetry.table(t.telemetry, "rnbd_export"), "openers",
                SameAsTelemetry.table(t.telemetry, "rnbd_export_opener"));
        List<Map<String, Object>> exports = MiniJson.array(json);
        assertEquals("vol\"1", exports.get(0).get("name"));
        assertEquals(List.of(Map.of("session", "s1", "access_mode", "RW", "device_id", 0L),
                Map.of("session", "s2", "access_mode", "RO", "device_id", 3L)), exports.get(0).get("openers"));
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) exports.get(1).get("stats");
        assertEquals(0L, st.get("reads"));
        assertEquals(true, exports.get(1).get("read_only"));

        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(new ExportsCommand()));
    }

    private ExportResizeCommand resize(String name, String size) {
        ExportResizeCommand c = new ExportResizeCommand();
        c.admin = server;
        c.export = name;
        c.size = size;
        return c;
    }

    @Test
    void exportResizeGrowsAndAShrinkUnderAClientIsRefused() {
        server.put(new ExportInfo("vol1", "memory", 1L << 20, ExportState.ONLINE, false, List.of(), BlockIoStats.ZERO,
                ""));
        assertEquals("export vol1: 4.0 MiB (4194304 bytes); mapped clients adopt it at their next size refresh "
                + "(size.refresh.ms) or rnbd:resize\n", Out.run(resize("vol1", "4m")));
        assertEquals(4L << 20, server.exports.get("vol1").size());
        ExportInfo e = server.exports.get("vol1");
        server.put(new ExportInfo(e.name(), e.backend(), e.size(), e.state(), e.readOnly(),
                List.of(new Opener("s1", AccessMode.RW, 0)), e.stats(), e.lastError()));
        assertEquals("Error: EBUSY: export vol1 is open by session s1 with 4194304 bytes mapped: shrinking to 1048576 "
                + "would fail their IO beyond it (unmap them first)\n", Out.run(resize("vol1", "1m")));
        assertEquals("Error: size 513 must be a positive multiple of 512 bytes\n", Out.run(resize("vol1", "513")));
        assertEquals("Error: size big is not a size (e.g. 512, 64k, 1m, 1g, 1t)\n", Out.run(resize("vol1", "big")));
        assertEquals("Error: ENOENT: no export nope\n", Out.run(resize("nope", "1m")));
        ExportResizeCommand noServer = resize("vol1", "8m");
        noServer.admin = null;
        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(noServer));
        assertEquals(4L << 20, server.exports.get("vol1").size());
    }
}
