package io.rnbd.telemetry.jmx.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdClientAdmin.MapRequest;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportRequest;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.internal.TelemetryReader;
import io.rnbd.telemetry.testing.StubAdmins;
import io.rnbd.testkit.Await;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class JmxExporterTest {
    private final MBeanServer server = MBeanServerFactory.newMBeanServer();
    private final StubAdmins admins = new StubAdmins().applianceProfile();
    private final TelemetryReader telemetry = new TelemetryReader(admins.sources());
    /** What the RTRS admins' setAuthMethod answers; null: it refuses with {@link #authRefusal}. */
    private IOException authRefusal;
    private final RtrsClientAdmin rtrsClient = settingAuth(RtrsClientAdmin.class, admins.rtrsClient, "client");
    private final RtrsServerAdmin rtrsServer = settingAuth(RtrsServerAdmin.class, admins.rtrsServer, "server");
    private JmxExporter exporter;

    private JmxExporter start(long refreshMillis) throws Exception {
        exporter = new JmxExporter(server, telemetry, changed -> new Operations(() -> rtrsClient, () -> rtrsServer,
                () -> admins.rnbdClient, () -> admins.rnbdServer, changed), refreshMillis);
        return exporter;
    }

    /** The stub admin, whose setAuthMethod is recorded in the calls and answers as the real one's would. */
    private <T> T settingAuth(Class<T> type, T stub, String end) {
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (p, m, a) -> {
            if (m.getName().equals("setAuthMethod")) {
                admins.calls.add("setAuthMethod " + end + " " + a[0]);
                if (authRefusal != null) {
                    throw authRefusal;
                }
                return end + ": new paths authenticate with " + a[0];
            }
            try {
                return m.invoke(stub, a);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }));
    }

    @AfterEach
    void stop() {
        if (exporter != null) {
            exporter.close();
        }
    }

    private Set<String> names() throws Exception {
        return server.queryNames(new ObjectName("io.rnbd:*"), null).stream().map(ObjectName::toString)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void everyRowIsAnMBeanNamedByItsIdentity() throws Exception {
        start(60_000);
        assertEquals(new TreeSet<>(List.of(
                "io.rnbd:type=rtrs-client", "io.rnbd:type=rnbd-client", "io.rnbd:type=rnbd-server",
                "io.rnbd:type=rdma-device,device=soft0", "io.rnbd:type=rdma-device,device=soft1",
                "io.rnbd:type=rtrs-client-session,session=appliance",
                "io.rnbd:type=rtrs-client-path,session=appliance,path=127.0.0.1@127.0.0.1",
                "io.rnbd:type=rtrs-client-path,session=appliance,path=127.0.0.2@127.0.0.2",
                "io.rnbd:type=rtrs-server-session,session=appliance",
                // issue 34: every registered policy, authenticator and backend, by its announced name and bundle
                "io.rnbd:type=rtrs-mp-policy,name=min-inflight,bundle=rtrs-mp-min-inflight",
                "io.rnbd:type=rtrs-mp-policy,name=min-latency,bundle=rtrs-mp-min-latency",
                "io.rnbd:type=rtrs-mp-policy,name=round-robin,bundle=rtrs-mp-round-robin",
                "io.rnbd:type=rtrs-authenticator,name=none,bundle=rtrs-auth-none",
                "io.rnbd:type=rnbd-backend,name=file,bundle=rnbd-backend-file",
                "io.rnbd:type=rnbd-backend,name=memory,bundle=rnbd-backend-memory",
                "io.rnbd:type=rtrs-server-path,session=appliance,path=00000000-0000-0003-0000-000000000004",
                "io.rnbd:type=rtrs-server-path,session=appliance,path=00000000-0000-0005-0000-000000000006",
                "io.rnbd:type=rnbd-export,export=mem0", "io.rnbd:type=rnbd-export-opener,export=mem0,session=appliance",
                "io.rnbd:type=rnbd-device,device=rnbd0", "io.rnbd:type=nbd-gateway")), names());
    }

    @Test
    void attributesAreEveryColumnReadLive() throws Exception {
        start(60_000);
        ObjectName path = new ObjectName("io.rnbd:type=rtrs-client-path,session=appliance,path=127.0.0.1@127.0.0.1");
        TableSchema schema = telemetry.table("rtrs_client_path").orElseThrow().schema();
        assertEquals(schema.columns().stream().map(Column::attribute).toList(),
                List.of(server.getMBeanInfo(path).getAttributes()).stream().map(MBeanAttributeInfo::getName).toList());
        assertEquals("CONNECTED", server.getAttribute(path, "State"));
        assertEquals(1042L, server.getAttribute(path, "Reads"));
        assertEquals(1042L * 4096, server.getAttribute(path, "ReadBytes"));
        assertEquals("soft0", server.getAttribute(path, "HcaName"));
        CompositeData latency = (CompositeData) server.getAttribute(path, "IoLatency");
        assertEquals(1042L, latency.get("count"));
        assertEquals(1042 * 80_000 / 1e9, (Double) latency.get("sum_seconds"), 1e-9);
        assertEquals(((long[]) latency.get("counts")).length, ((double[]) latency.get("bounds_seconds")).length + 1);

        admins.pathState("appliance", "127.0.0.1@127.0.0.1", PathState.CLOSED);
        assertEquals("CLOSED", server.getAttribute(path, "State"), "not cached");

        ObjectName soft0 = new ObjectName("io.rnbd:type=rdma-device,device=soft0");
        assertArrayEquals(new String[] {"127.0.0.1"}, (String[]) server.getAttribute(soft0, "Addresses"));
        TabularData counters = (TabularData) server.getAttribute(soft0, "Counters");
        assertEquals(12L, counters.get(new Object[] {"polls"}).get("value"));
        assertEquals(Boolean.FALSE, server.getAttribute(new ObjectName("io.rnbd:type=rnbd-export,export=mem0"), "ReadOnly"));
        assertEquals(1L, server.getAttribute(new ObjectName("io.rnbd:type=nbd-gateway"), "ConnectionsOpen"));
    }

    @Test
    void rowsThatComeAndGoAreRegisteredAndUnregisteredByTheRefresh() throws Exception {
        start(100);
        ObjectName extra = new ObjectName("io.rnbd:type=rtrs-client-path,session=appliance,path=\"10.0.0.1@10.0.0.2:1234\"");
        RtrsClientSessionInfo s = admins.clientSessions.get(0);
        List<io.rnbd.rtrs.api.RtrsClientPathInfo> paths = new ArrayList<>(s.paths());
        paths.add(StubAdmins.clientPath("10.0.0.1@10.0.0.2:1234", PathState.CONNECTING, "", 0, 0));
        admins.clientSessions.set(0, new RtrsClientSessionInfo(s.name(), s.state(), 0, 512, "min-inflight",
                "min-inflight", -1, paths));
        awaitRegistered(extra, true);
        assertEquals("CONNECTING", server.getAttribute(extra, "State"));
        admins.clientSessions.set(0, s);
        awaitRegistered(extra, false);
        admins.devices.clear();
        awaitRegistered(new ObjectName("io.rnbd:type=rnbd-device,device=rnbd0"), false);
    }

    private void awaitRegistered(ObjectName name, boolean registered) {
        Await.until(name + (registered ? " registered" : " unregistered"),
                () -> server.isRegistered(name) == registered, Duration.ofSeconds(5));
    }

    @Test
    void closingTakesEveryMBeanAndTheRefreshThreadAway() throws Exception {
        start(100);
        assertTrue(names().size() > 3);
        assertTrue(refreshThreads() == 1, "one refresh thread while running");
        exporter.close();
        exporter = null;
        assertEquals(Set.of(), names());
        assertEquals(0, refreshThreads());
    }

    private static long refreshThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals(JmxExporter.THREAD_NAME)).count();
    }

    @Test
    void pathOperationsGoToTheAdminAndItsErrorsComeBack() throws Exception {
        start(60_000);
        ObjectName client = new ObjectName("io.rnbd:type=rtrs-client");
        assertArrayEquals(new String[] {"appliance"}, (String[]) server.getAttribute(client, "Sessions"));
        server.invoke(client, "disconnectPath", new Object[] {"appliance", "127.0.0.1@127.0.0.1"},
                new String[] {"java.lang.String", "java.lang.String"});
        server.invoke(client, "setMaxReconnectAttempts", new Object[] {"appliance", 7},
                new String[] {"java.lang.String", "int"});
        assertEquals(List.of("disconnectPath appliance 127.0.0.1@127.0.0.1", "setMaxReconnectAttempts appliance 7"),
                admins.calls);
        Exception e = assertThrows(Exception.class, () -> server.invoke(client, "addPath",
                new Object[] {"nope", "1.2.3.4"}, new String[] {"java.lang.String", "java.lang.String"}));
        assertTrue(String.valueOf(e.getCause()).contains("no session 'nope'"), String.valueOf(e.getCause()));
        javax.management.MBeanOperationInfo addPath = List.of(server.getMBeanInfo(client).getOperations()).stream()
                .filter(o -> o.getName().equals("addPath")).findFirst().orElseThrow();
        assertEquals(List.of("session", "path"), List.of(addPath.getSignature()).stream()
                .map(javax.management.MBeanParameterInfo::getName).toList(), "parameter names for jconsole");
    }

    @Test
    void mapAndExportOperationsAreTheAdminServicesOperations() throws Exception {
        start(60_000);
        ObjectName client = new ObjectName("io.rnbd:type=rnbd-client");
        ObjectName srv = new ObjectName("io.rnbd:type=rnbd-server");
        String[] one = {"java.lang.String"};
        String[] four = {"java.lang.String", "java.lang.String", "java.lang.String", "java.lang.String"};
        admins.answer = "rnbd1 mapped: mem0 over appliance, RO, 1.0 GiB";
        assertEquals(admins.answer, server.invoke(client, "map", new Object[] {"rnbd1", "appliance", "mem0", "RO"},
                four));
        server.invoke(client, "unmap", new Object[] {"rnbd1"}, one);
        server.invoke(client, "remap", new Object[] {"rnbd0"}, one);
        server.invoke(client, "resize", new Object[] {"rnbd0"}, one);
        server.invoke(srv, "addExport", new Object[] {"vol1", "file", "1g", "/srv/vol1.img", true, false},
                new String[] {"java.lang.String", "java.lang.String", "java.lang.String", "java.lang.String",
                        "boolean", "boolean"});
        server.invoke(srv, "addExport", new Object[] {"vol0", "memory", "1m", "", false, true},
                new String[] {"java.lang.String", "java.lang.String", "java.lang.String", "java.lang.String",
                        "boolean", "boolean"});
        server.invoke(srv, "removeExport", new Object[] {"vol1"}, one);
        // issue 34: any registered backend with its own parameters
        String[] withParams = {"java.lang.String", "java.lang.String", "[Ljava.lang.String;", "boolean"};
        server.invoke(srv, "addExportWithParams", new Object[] {"vol2", "rbd", new String[] {"image=vol2", "pool=rbd"},
                false}, withParams);
        assertEquals(List.of("mapDevice " + new MapRequest("rnbd1", List.of("appliance"), "mem0", AccessMode.RO),
                "unmapDevice rnbd1 false", "remapDevice rnbd0", "resizeDevice rnbd0",
                "addExport " + new ExportRequest("vol1", "file", Map.of("size", "1g", "path", "/srv/vol1.img",
                        "create", "true"), false),
                "addExport " + new ExportRequest("vol0", "memory", Map.of("size", "1m"), true),
                "removeExport vol1 false",
                "addExport " + new ExportRequest("vol2", "rbd", Map.of("image", "vol2", "pool", "rbd"), false)),
                admins.calls);
        admins.calls.clear();
        for (String bad : new String[] {"image", "=vol", "k y=1", "image="}) {
            Exception e = assertThrows(Exception.class, () -> server.invoke(srv, "addExportWithParams",
                    new Object[] {"vol3", "rbd", new String[] {bad}, false}, withParams));
            assertTrue(String.valueOf(e.getCause()).contains("EINVAL: a parameter is KEY=VALUE"), bad + ": "
                    + e.getCause());
        }
        Exception mode = assertThrows(Exception.class, () -> server.invoke(client, "map",
                new Object[] {"rnbd1", "appliance", "mem0", "RW;x"}, four));
        assertTrue(String.valueOf(mode.getCause()).contains("EINVAL: access mode"), String.valueOf(mode.getCause()));
        assertEquals(List.of(), admins.calls, "nothing asked for refused arguments");
        assertEquals(List.of("memory rnbd-backend-memory 0.1.0.SNAPSHOT [67]"),
                List.of((String[]) server.getAttribute(srv, "Backends")).subList(1, 2));
        assertEquals("min-inflight rtrs-mp-min-inflight 0.1.0.SNAPSHOT [60]",
                ((String[]) server.getAttribute(new ObjectName("io.rnbd:type=rtrs-client"), "MpPolicies"))[0]);
        // the service's refusal comes back as its one line, errno first, no "Error: "
        admins.failOp = new BlockIoException(Errno.EBUSY, "rnbd0: rnbd0 is in use (rnbd:unmap --force rnbd0 unmaps "
                + "anyway)");
        Exception e = assertThrows(Exception.class, () -> server.invoke(client, "unmap", new Object[] {"rnbd0"}, one));
        assertTrue(String.valueOf(e.getCause()).contains("EBUSY: rnbd0: rnbd0 is in use"), String.valueOf(e.getCause()));
        assertFalse(String.valueOf(e.getCause()).contains("Error: "));
    }

    /** Issue 38: the client's or the server's admin service owns the operation; JMX only says which end. */
    @Test
    void setAuthMethodIsTheEndsAdminServiceOperation() throws Exception {
        start(60_000);
        ObjectName client = new ObjectName("io.rnbd:type=rtrs-client");
        String[] two = {"java.lang.String", "java.lang.String"};
        assertEquals("client: new paths authenticate with none", server.invoke(client, "setAuthMethod",
                new Object[] {"client", "none"}, two));
        assertEquals("server: new paths authenticate with default", server.invoke(client, "setAuthMethod",
                new Object[] {"server", "default"}, two));
        assertEquals(List.of("setAuthMethod client none", "setAuthMethod server default"), admins.calls);

        // the service's refusal comes back as its one line, errno first
        authRefusal = new RtrsAdminException(Errno.EINVAL, "unknown authenticator 'chap' (registered: none; or "
                + "default)");
        Exception e = assertThrows(Exception.class, () -> server.invoke(client, "setAuthMethod",
                new Object[] {"client", "chap"}, two));
        assertTrue(String.valueOf(e.getCause()).contains("EINVAL: unknown authenticator 'chap' (registered: none; "
                + "or default)"), String.valueOf(e.getCause()));
        assertFalse(String.valueOf(e.getCause()).contains("Error: "));

        // an end that is neither asks no service
        admins.calls.clear();
        for (String end : new String[] {"both", null}) {
            e = assertThrows(Exception.class, () -> server.invoke(client, "setAuthMethod", new Object[] {end, "none"},
                    two));
            assertTrue(String.valueOf(e.getCause()).contains("EINVAL: end must be client or server, not '" + end
                    + "'"), String.valueOf(e.getCause()));
        }
        assertEquals(List.of(), admins.calls);
    }

    @Test
    void withoutTheServicesTheOperationsSaySo() throws Exception {
        exporter = new JmxExporter(server, telemetry, changed -> new Operations(() -> rtrsClient, () -> null,
                () -> null, () -> null, changed), 60_000);
        Exception e = assertThrows(Exception.class, () -> server.invoke(new ObjectName("io.rnbd:type=rnbd-client"),
                "unmap", new Object[] {"rnbd0"}, new String[] {"java.lang.String"}));
        assertTrue(String.valueOf(e.getCause()).contains("RNBD client (bundle rnbd-client) is not running"),
                String.valueOf(e.getCause()));
        e = assertThrows(Exception.class, () -> server.invoke(new ObjectName("io.rnbd:type=rnbd-server"),
                "removeExport", new Object[] {"vol0"}, new String[] {"java.lang.String"}));
        assertTrue(String.valueOf(e.getCause()).contains("RNBD server (bundle rnbd-server) is not running"),
                String.valueOf(e.getCause()));
    }

    @Test
    void withoutTheRtrsServerItsEndSaysSoAndTheClientsOperationsStillWork() throws Exception {
        exporter = new JmxExporter(server, telemetry, changed -> new Operations(() -> rtrsClient, () -> null,
                () -> admins.rnbdClient, () -> admins.rnbdServer, changed), 60_000);
        ObjectName client = new ObjectName("io.rnbd:type=rtrs-client");
        String[] two = {"java.lang.String", "java.lang.String"};
        Exception e = assertThrows(Exception.class, () -> server.invoke(client, "setAuthMethod",
                new Object[] {"server", "none"}, two));
        assertTrue(String.valueOf(e.getCause()).contains("RTRS server (bundle rtrs-server) is not running"),
                String.valueOf(e.getCause()));
        server.invoke(client, "setAuthMethod", new Object[] {"client", "none"}, two);
        server.invoke(client, "resetStats", new Object[] {"appliance"}, new String[] {"java.lang.String"});
        assertEquals(List.of("setAuthMethod client none", "resetStats appliance"), admins.calls);
    }

    /** What an instance SCR discarded without deactivating it leaves: the exporter takes the name over. */
    public interface LeftoverMBean {
        int getLeftover();
    }

    @Test
    void aSubsystemNameLeftRegisteredIsTakenOver() throws Exception {
        ObjectName client = new ObjectName("io.rnbd:type=rtrs-client");
        server.registerMBean(new StandardMBean((LeftoverMBean) () -> 1, LeftoverMBean.class), client);
        start(60_000);
        server.invoke(client, "resetStats", new Object[] {"appliance"}, new String[] {"java.lang.String"});
        assertEquals(List.of("resetStats appliance"), admins.calls);
        exporter.close();
        assertFalse(server.isRegistered(client), "closed, the exporter unregistered what it took over");
    }

    @Test
    void aConstructorThatFailsLeavesNoMBeanBehind() throws Exception {
        Telemetry failing = new Telemetry() {
            @Override
            public List<TableSchema> schemas() {
                return telemetry.schemas();
            }

            @Override
            public List<Table> tables() {
                throw new IllegalStateException("a source's service went away");
            }

            @Override
            public Optional<Table> table(String name) {
                return telemetry.table(name);
            }
        };
        assertThrows(IllegalStateException.class, () -> new JmxExporter(server, failing,
                changed -> new Operations(() -> rtrsClient, () -> rtrsServer, () -> admins.rnbdClient,
                        () -> admins.rnbdServer, changed), 60_000));
        assertEquals(Set.of(), server.queryNames(new ObjectName("io.rnbd:*"), null));
    }

    @Test
    void aTooShortRefreshIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> start(10));
    }

    @Test
    void everyTableHasAnMBeanType() {
        for (Table t : telemetry.tables()) {
            assertFalse(t.rows().isEmpty(), t.schema().name() + " has rows in the appliance profile");
        }
    }
}
