package io.rnbd.rnbd.server.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportRequest;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportResult;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.testkit.cm.FakeConfigAdmin;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * export-add/remove as the operator runs them: checked requests, the export configuration,
 * the wait for the server on fake time, the configuration taken back when the server never
 * took it. The server is a fake; ExportComponent's part (a configuration becomes an export)
 * is played by the ConfigAdmin's hooks.
 */
class ServerAdminTest {
    private final FakeConfigAdmin ca = new FakeConfigAdmin();
    private final FakeServer server = new FakeServer();
    private long now;
    private final ServerAdmin admin = new ServerAdmin(server, ca, () -> now, ms -> now += ms * 1_000_000);
    /** What a new export becomes; null: the server never takes it. */
    private ExportState outcome = ExportState.ONLINE;
    private boolean dropOnDelete = true;

    {
        ca.onUpdate = c -> {
            if (ExportComponent.PID.equals(c.factoryPid) && outcome != null) {
                String size = (String) c.get("backend.size");
                server.exports.put((String) c.get("name"), new ExportInfo((String) c.get("name"),
                        (String) c.get("backend"), size == null ? 0 : Long.parseLong(size), outcome,
                        Boolean.TRUE.equals(c.get("read.only")), List.of(), BlockIoStats.ZERO,
                        outcome == ExportState.ONLINE ? "" : "cannot open /x: no such file"));
            }
        };
        ca.onDelete = c -> {
            if (dropOnDelete) {
                server.exports.remove((String) c.get("name"));
            }
        };
    }

    private static int errno(Executable e) {
        return assertThrows(BlockIoException.class, e).errno();
    }

    @Test
    void anExportIsKeptInItsConfigurationAndReported() throws IOException {
        ExportResult r = admin.addExport(new ExportRequest("pool/vol1", "memory", Map.of("size", "1g"), true,
                List.of("host1", " host2"), 0L));
        assertEquals("export pool/vol1 added: online, memory, 1.0 GiB, read-only", r.message());
        FakeConfigAdmin.Conf conf = ca.of(ExportComponent.PID).get(0);
        assertEquals("?", conf.location);
        assertEquals(Map.of("name", "pool/vol1", "backend", "memory", "backend.size", "1073741824", "read.only", true,
                "allowed.sessions", "host1,host2", "offline.wait.ms", 0L, "service.pid", conf.pid,
                "service.factoryPid", ExportComponent.PID), Map.copyOf(new HashMap<>(conf.props)));
        assertEquals(0, now, "no wait once online");
    }

    @Test
    void badRequestsAreEinvalAndConfigureNothing() {
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("a b", "memory",
                Map.of("size", "1m"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", null, Map.of(), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "memory", Map.of(), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "memory",
                Map.of("size", "513"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "memory",
                Map.of("size", "1m", "path", "/x"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "file",
                Map.of("path", "rel/x"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "file",
                Map.of("path", "/x", "create", "true"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "rbd",
                Map.of("create", "true"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "rbd",
                Map.of("im age", "x"), false))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"),
                false, List.of("a(b"), null))));
        assertEquals(Errno.EINVAL, errno(() -> admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"),
                false, List.of(), -1L))));
        BlockIoException e = assertThrows(BlockIoException.class, () -> admin.addExport(new ExportRequest("v", "nope",
                Map.of(), false)));
        assertEquals("EINVAL: unknown backend 'nope' (registered: file, memory; rnbd:backends lists them)",
                e.getMessage());
        server.refuse = "size=1t is over the memory backend's limit";
        e = assertThrows(BlockIoException.class, () -> admin.addExport(new ExportRequest("v", "memory",
                Map.of("size", "1t"), false)));
        assertEquals("EINVAL: export v could never open: size=1t is over the memory backend's limit", e.getMessage());
        assertTrue(ca.configs.isEmpty(), ca.configs.toString());
    }

    @Test
    void anExportTheServerNeverTakesIsTakenBack() {
        outcome = null;
        BlockIoException e = assertThrows(BlockIoException.class,
                () -> admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"), false)));
        assertEquals(Errno.ETIMEDOUT, e.errno());
        assertTrue(ca.configs.isEmpty(), "rolled back: " + ca.configs);
        assertTrue(now >= ServerAdmin.SETTLE_MS * 1_000_000, "waited the whole settle time");
    }

    @Test
    void anExportOfflineForAReasonStaysAndSaysWhy() throws IOException {
        outcome = ExportState.OFFLINE;
        assertEquals("export v added: offline, file, 0 B (cannot open /x: no such file)",
                admin.addExport(new ExportRequest("v", "file", Map.of("path", "/x"), false)).message());
        assertEquals(1, ca.of(ExportComponent.PID).size());
        assertTrue(now >= ServerAdmin.ONLINE_MS * 1_000_000 && now < ServerAdmin.SETTLE_MS * 1_000_000, "" + now);
    }

    @Test
    void anExportNameIsTakenOnce() throws IOException {
        ca.existing(ExportComponent.PID, Map.of("name", "v", "backend", "memory", "backend.size", "1048576"));
        assertEquals(Errno.EEXIST, errno(() -> admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"),
                false))));
        assertEquals(1, ca.configs.size());
    }

    @Test
    void removeIsRefusedWhileOpenUnlessForcedAndWaitsForTheServer() throws IOException {
        admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"), false));
        ExportInfo e = server.exports.get("v");
        server.exports.put("v", new ExportInfo("v", "memory", e.size(), e.state(), false,
                List.of(new RnbdServerAdmin.Opener("client1", AccessMode.RW, 0)), e.stats(), ""));
        BlockIoException x = assertThrows(BlockIoException.class, () -> admin.removeExport("v", false));
        assertEquals("EBUSY: export 'v' is open by client1; use --force", x.getMessage());
        assertEquals(1, ca.configs.size());
        ExportResult r = admin.removeExport("v", true);
        assertEquals("export v removed", r.message());
        assertEquals(0, now, "no wait once the server let it go");
        assertNull(r.export());
        assertTrue(ca.configs.isEmpty());
        assertEquals(Errno.ENOENT, errno(() -> admin.removeExport("v", false)));
    }

    @Test
    void anExportTheServerKeepsAfterRemovalIsAnError() throws IOException {
        admin.addExport(new ExportRequest("v", "memory", Map.of("size", "1m"), false));
        dropOnDelete = false;
        assertEquals(Errno.ETIMEDOUT, errno(() -> admin.removeExport("v", false)));
        assertTrue(ca.configs.isEmpty(), "the configuration is gone all the same");
    }

    private static final class FakeServer implements RnbdServerAdmin {
        final Map<String, ExportInfo> exports = new TreeMap<>();
        /** validateExport's refusal; null: accepted. */
        String refuse;

        @Override
        public List<ExportInfo> exports() {
            return List.copyOf(exports.values());
        }

        @Override
        public List<Provider> backends() {
            return List.of(new Provider("memory", "rnbd-backend-memory", "0.1.0", 7, 0),
                    new Provider("file", "rnbd-backend-file", "0.1.0", 8, 0));
        }

        @Override
        public void validateExport(String backend, Map<String, String> params, boolean readOnly) throws IOException {
            if (refuse != null) {
                throw new IOException(refuse);
            }
        }

        @Override
        public void forceClose(String export, String session) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void resetStats(String export) {
            throw new UnsupportedOperationException();
        }
    }
}
