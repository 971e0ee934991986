package io.rnbd.rnbd.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.Opener;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rnbd:exports, rnbd:export-add, rnbd:export-remove over a fake ConfigAdmin and server. */
class ExportCommandsTest {
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private final FakeServerAdmin server = new FakeServerAdmin();

    {
        // the server picks exports up from their configuration, as rnbd-server does
        ca.onUpdate = c -> {
            if (Configs.EXPORT_PID.equals(c.factoryPid)) {
                boolean file = "file".equals(c.get("backend"));
                server.put(new ExportInfo((String) c.get("name"), (String) c.get("backend"),
                        file ? 0 : Long.parseLong((String) c.get("backend.size")),
                        file ? ExportState.OFFLINE : ExportState.ONLINE, (Boolean) c.get("read.only"), List.of(),
                        BlockIoStats.ZERO, file ? "file backend: no such file " + c.get("backend.path") : ""));
            }
        };
        ca.onDelete = c -> server.exports.remove((String) c.get("name"));
    }

    private ExportAddCommand add(String name, String backend) {
        ExportAddCommand c = new ExportAddCommand();
        c.configAdmin = ca;
        c.admin = server;
        c.name = name;
        c.backend = backend;
        c.waitMillis = 0;
        return c;
    }

    private ExportRemoveCommand remove(String name) {
        ExportRemoveCommand c = new ExportRemoveCommand();
        c.configAdmin = ca;
        c.admin = server;
        c.name = name;
        return c;
    }

    @Test
    void addMemoryExportStoresTheKeysTheServerReads() {
        ExportAddCommand c = add("vol1", "memory");
        c.size = "1g";
        c.readOnly = true;
        c.allowedSessions = "a, b,,";
        assertEquals("export vol1 added: online, memory, 1.0 GiB, read-only\n", Out.run(c));
        FakeConfigAdmin.Conf conf = ca.of(Configs.EXPORT_PID).get(0);
        assertEquals("?", conf.location);
        assertEquals("vol1", conf.get("name"));
        assertEquals("memory", conf.get("backend"));
        assertEquals("1073741824", conf.get("backend.size"));
        assertEquals(true, conf.get("read.only"));
        assertEquals("a,b", conf.get("allowed.sessions"));
        assertEquals(null, conf.get("offline.wait.ms"), "not given: the server's default applies");
        assertEquals(null, conf.get("backend.path"));
    }

    @Test
    void addFileExportReportsWhyItIsOffline() {
        ExportAddCommand c = add("disk", "file");
        c.path = "/var/lib/rnbd/disk.img";
        c.create = true;
        c.size = "64m";
        c.offlineWaitMs = "5000";
        assertEquals("export disk added: offline, file, 0 B (file backend: no such file /var/lib/rnbd/disk.img)\n",
                Out.run(c));
        FakeConfigAdmin.Conf conf = ca.of(Configs.EXPORT_PID).get(0);
        assertEquals("/var/lib/rnbd/disk.img", conf.get("backend.path"));
        assertEquals("true", conf.get("backend.create"));
        assertEquals("67108864", conf.get("backend.size"));
        assertEquals(5000L, conf.get("offline.wait.ms"));
    }

    @Test
    void theBackendsHintsNameTheConsolesFlags() {
        ca.onUpdate = c -> server.put(new ExportInfo((String) c.get("name"), "file", 0, ExportState.OFFLINE, false,
                List.of(), BlockIoStats.ZERO, "file backend: " + c.get("backend.path")
                        + ": no such file (give size= to create it)"));
        ExportAddCommand c = add("disk", "file");
        c.path = "/nowhere/disk.img";
        assertEquals("export disk added: offline, file, 0 B (file backend: /nowhere/disk.img: no such file"
                + " (give --size to create it))\n", Out.run(c));

        assertEquals("file backend: /x: is empty (give --size and --create to extend it)",
                ConsoleWords.flags("file backend: /x: is empty (give size= and create=true to extend it)"));
        assertEquals("file backend: /x: is 512 bytes, smaller than size=4096 (--create extends it)",
                ConsoleWords.flags("file backend: /x: is 512 bytes, smaller than size=4096 (create=true extends it)"));
        assertEquals("rbd backend: no such image (give create.size= to create it)",
                ConsoleWords.flags("rbd backend: no such image (give create.size= to create it)"));
    }

    @Test
    void withoutTheServerTheExportIsStillConfigured() {
        ExportAddCommand c = add("vol1", "memory");
        c.admin = null;
        c.size = "4k";
        assertEquals("export vol1 configured; the RNBD server is not running (bundle rnbd-server)\n", Out.run(c));
        assertEquals(1, ca.of(Configs.EXPORT_PID).size());
    }

    @Test
    void badArgumentsAreOneLineAndConfigureNothing() {
        Map<String, ExportAddCommand> cases = new java.util.LinkedHashMap<>();
        cases.put("Error: unknown backend 'nvme' (registered: file, memory; rnbd:backends lists them)", add("v", "nvme"));
        cases.put("Error: the memory backend needs --size", add("v", "memory"));
        ExportAddCommand path = add("v", "memory");
        path.size = "1m";
        path.path = "/x";
        cases.put("Error: --path and --create are for the file backend", path);
        ExportAddCommand rel = add("v", "file");
        rel.path = "relative.img";
        cases.put("Error: the file backend needs --path with an absolute path", rel);
        ExportAddCommand create = add("v", "file");
        create.path = "/x.img";
        create.create = true;
        cases.put("Error: --create needs --size", create);
        ExportAddCommand size = add("v", "memory");
        size.size = "lots";
        cases.put("Error: size lots is not a size (e.g. 512, 64k, 1m, 1g, 1t)", size);
        ExportAddCommand zero = add("v", "memory");
        zero.size = "0";
        cases.put("Error: size 0 must be a positive multiple of 512 bytes", zero);
        ExportAddCommand name = add("a b", "memory");
        name.size = "1m";
        cases.put("Error: export name 'a b' is not a valid name (letters, digits and . _ : @ / -, at most 254)", name);
        ExportAddCommand noBackend = add("v", null);
        cases.put("Error: --backend is required (rnbd:backends lists them: memory, file ...)", noBackend);
        ExportAddCommand param = add("v", "memory");
        param.size = "1m";
        param.params = List.of("size");
        cases.put("Error: --param takes KEY=VALUE (a key of letters, digits and . _ -), not 'size'", param);
        ExportAddCommand twice = add("v", "memory");
        twice.size = "1m";
        twice.params = List.of("size=2m");
        cases.put("Error: size is given both as an option and as --param", twice);

        ExportAddCommand sess = add("v", "memory");
        sess.size = "1m";
        sess.allowedSessions = "ok,(bad)";
        cases.put("Error: allowed session '(bad)' is not a valid name (letters, digits and . _ : @ -, at most 254)", sess);
        ExportAddCommand wait = add("v", "memory");
        wait.size = "1m";
        wait.offlineWaitMs = "-1";
        cases.put("Error: --offline-wait-ms must be a number of milliseconds >= 0, not '-1'", wait);
        ExportAddCommand waitText = add("v", "memory");
        waitText.size = "1m";
        waitText.offlineWaitMs = "soon";
        cases.put("Error: --offline-wait-ms must be a number of milliseconds >= 0, not 'soon'", waitText);
        cases.forEach((expected, c) -> assertEquals(expected + "\n", Out.run(c)));
        assertTrue(ca.configs.isEmpty());
    }

    /**
     * Issue 34: any registered backend by the name it announces (rbd; a bundle of the user's
     * own), its parameters given as --param; refused when not registered, naming those that are.
     */
    @Test
    void anyRegisteredBackendWithItsOwnParameters() {
        ExportAddCommand rbd = add("vol1", "rbd");
        assertEquals("Error: unknown backend 'rbd' (registered: file, memory; rnbd:backends lists them)\n", Out.run(rbd));
        server.backends.add(new Provider("rbd", "rnbd-backend-rbd", "0.1.0.SNAPSHOT", 70, 0));
        server.backends.add(new Provider("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", 71, 0));
        rbd.create = true;
        assertEquals("Error: --create is for the file backend (give --param for rbd's own)\n", Out.run(rbd));
        assertTrue(ca.configs.isEmpty());
        rbd.create = false;
        rbd.params = List.of("image=vol1", " pool = fast ");
        Out.run(rbd);
        FakeConfigAdmin.Conf conf = ca.of(Configs.EXPORT_PID).get(0);
        assertEquals("rbd", conf.get("backend"));
        assertEquals("vol1", conf.get("backend.image"));
        assertEquals("fast", conf.get("backend.pool"));
        assertTrue(server.calls.contains("validate rbd {image=vol1, pool=fast}"), server.calls.toString());

        ExportAddCommand own = add("mine", "simple-file");
        own.path = "/srv/mine.img";
        own.size = "64m";
        Out.run(own);
        FakeConfigAdmin.Conf mine = ca.of(Configs.EXPORT_PID).get(1);
        assertEquals("simple-file", mine.get("backend"));
        assertEquals("/srv/mine.img", mine.get("backend.path"));
        assertEquals("67108864", mine.get("backend.size"));
    }

    @Test
    void backendsTableAndJson() {
        server.backends.add(new Provider("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", 71, 0,
                List.of("mine")));
        BackendsCommand t = new BackendsCommand();
        t.admin = server;
        List<String> lines = Out.run(t).lines().toList();
        assertEquals(4, lines.size(), lines.toString());
        assertTrue(lines.get(0).matches("NAME\\s+BUNDLE\\s+VERSION\\s+ID\\s+RANKING\\s+EXPORTS"), lines.get(0));
        assertTrue(lines.get(3).matches("simple-file\\s+org.example.rnbd.backend.simplefile\\s+1.0.0\\s+71\\s+0\\s+mine"),
                lines.get(3));
        BackendsCommand j = new BackendsCommand();
        j.admin = server;
        j.json = true;
        assertEquals(Map.of("name", "simple-file", "bundle", "org.example.rnbd.backend.simplefile", "version", "1.0.0",
                "bundle_id", 71L, "ranking", 0L, "exports", List.of("mine")), MiniJson.array(Out.run(j)).get(2));
        server.backends.clear();
        assertEquals("no block backend registered: exports stay offline until one is\n", Out.run(t));
        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(new BackendsCommand()));
    }

    @Test
    void anExportNameIsTakenOnceEvenByAConfigFile() {
        ca.existing(Configs.EXPORT_PID, Map.of("name", "vol1", "backend", "memory", "backend.size", "4096",
                "read.only", false));
        ExportAddCommand c = add("vol1", "memory");
        c.size = "1m";
        assertEquals("Error: export 'vol1' already exists\n", Out.run(c));
        assertEquals(1, ca.configs.size());
        ExportAddCommand noCa = add("vol2", "memory");
        noCa.size = "1m";
        noCa.configAdmin = null;
        assertEquals("Error: ConfigAdmin is not running\n", Out.run(noCa));
    }

    @Test
    void exportsTableAndJson() {
        server.put(new ExportInfo("vol\"1", "memory", 1L << 30, ExportState.ONLINE, false,
                List.of(new Opener("s1", AccessMode.RW, 0), new Opener("s2", AccessMode.RO, 3)),
                new BlockIoStats(10, 40960, 20, 81920, 1, 2), ""));
        server.put(new ExportInfo("zz", "file", 0, ExportState.OFFLINE, true, List.of(), null, "backend gone"));
        ExportsCommand t = new ExportsCommand();
        t.admin = server;
        List<String> lines = Out.run(t).lines().toList();
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(1).matches("vol\"1\\s+memory\\s+1.0 GiB\\s+online\\s+no\\s+s1:RW,s2:RO\\s+10\\s+20\\s+1\\s+2"),
                lines.get(1));
        assertTrue(lines.get(2).matches("zz\\s+file\\s+0 B\\s+offline\\s+yes\\s+0\\s+0\\s+0\\s+0\\s+backend gone"),
                lines.get(2));

        ExportsCommand j = new ExportsCommand();
        j.admin = server;
        j.json = true;
        List<Map<String, Object>> exports = MiniJson.array(Out.run(j));
        assertEquals("vol\"1", exports.get(0).get("name"));
        assertEquals(List.of(Map.of("session", "s1", "access_mode", "RW", "device_id", 0L),
                Map.of("session", "s2", "access_mode", "RO", "device_id", 3L)), exports.get(0).get("openers"));
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) exports.get(1).get("stats");
        assertEquals(0L, st.get("reads"));
        assertEquals(true, exports.get(1).get("read_only"));

        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(new ExportsCommand()));
    }

    @Test
    void removeDeletesTheConfigurationUnlessTheExportIsOpen() {
        ExportAddCommand a = add("vol1", "memory");
        a.size = "1m";
        Out.run(a);
        ExportInfo e = server.exports.get("vol1");
        server.put(new ExportInfo(e.name(), e.backend(), e.size(), e.state(), e.readOnly(),
                List.of(new Opener("s1", AccessMode.RW, 0)), e.stats(), e.lastError()));
        assertEquals("Error: export 'vol1' is open by s1; use --force\n", Out.run(remove("vol1")));
        assertEquals(1, ca.configs.size());
        ExportRemoveCommand force = remove("vol1");
        force.force = true;
        assertEquals("export vol1 removed\n", Out.run(force));
        assertTrue(ca.configs.isEmpty());
        assertTrue(server.exports.isEmpty());
        assertEquals("Error: no export 'vol1' is configured\n", Out.run(remove("vol1")));
    }

    @Test
    void addReportsTheExportOnceOnlineNotTheOfflineStateItStartsIn() {
        // rnbd-server shows a new export offline ("backend not available") until it has opened it
        ca.onUpdate = c -> {
            server.put(new ExportInfo("late", "memory", 0, ExportState.OFFLINE, false, List.of(),
                    BlockIoStats.ZERO, "backend 'memory' not available"));
            Thread opener = new Thread(() -> {
                java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L);
                server.put(new ExportInfo("late", "memory", 1L << 20, ExportState.ONLINE, false, List.of(),
                        BlockIoStats.ZERO, ""));
            });
            opener.start();
        };
        ExportAddCommand c = add("late", "memory");
        c.size = "1m";
        c.waitMillis = 10_000;
        assertEquals("export late added: online, memory, 1.0 MiB\n", Out.run(c));
    }

    /**
     * Issue 20 item 4: sizes that can never open are refused in one line and nothing is
     * saved, whether the size is wrong for every backend (checked here) or only over the
     * running backend's limit (asked of the server).
     */
    @Test
    void exportsThatCanNeverOpenAreRefusedAndNotSaved() {
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("513", "Error: size 513 must be a positive multiple of 512 bytes");
        cases.put("1000", "Error: size 1000 must be a positive multiple of 512 bytes");
        cases.put("9223372036854775807", "Error: size 9223372036854775807 must be a positive multiple of 512 bytes");
        cases.put("9223372036854775296", "Error: size 9223372036854775296 exceeds the largest device size (1 EiB, 2^60 bytes)");
        cases.put("2000000t", "Error: size 2000000t exceeds the largest device size (1 EiB, 2^60 bytes)");
        cases.put("65t", "Error: export v could never open: memory backend: size=71468255805440 exceeds the limit of 64t");
        cases.forEach((size, expected) -> {
            ExportAddCommand c = add("v", "memory");
            c.size = size;
            assertEquals(expected + "\n", Out.run(c), size);
        });
        ExportAddCommand file = add("f", "file");
        file.path = "/x.img";
        file.size = "513";
        assertEquals("Error: size 513 must be a positive multiple of 512 bytes\n", Out.run(file));
        assertTrue(ca.configs.isEmpty(), "nothing saved");
        assertTrue(server.exports.isEmpty());

        ExportAddCommand ok = add("v", "memory");
        ok.size = "64t";
        assertEquals("export v added: online, memory, 64.0 TiB\n", Out.run(ok));
        assertTrue(server.calls.contains("validate memory {size=70368744177664}"), server.calls.toString());
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
        ExportAddCommand a = add("vol1", "memory");
        a.size = "1m";
        Out.run(a);
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
        assertEquals("Error: no export 'nope'\n", Out.run(resize("nope", "1m")));
        ExportResizeCommand noServer = resize("vol1", "8m");
        noServer.admin = null;
        assertEquals("Error: the RNBD server is not running (bundle rnbd-server)\n", Out.run(noServer));
        assertEquals(4L << 20, server.exports.get("vol1").size());
    }
}
