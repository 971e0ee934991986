package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.management.MBeanServer;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.junit.Assume;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.CoreOptions;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.ColumnType;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;

/**
 * Issue #23, against the running distribution (the default profile on free ports): JMX through
 * a real RMI connection with Karaf's JAAS login, /metrics scraped over HTTP and read by the
 * Prometheus project's parser, the dashboard in headless Chromium watching a path fail and
 * come back, the console's listings printing the telemetry tables (issue 38), and nothing left
 * behind when the bundles stop.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ObservabilityIT extends KarafTestSupport {

    private static final String SESSION = "appliance";
    private static final String[] TWO_STRINGS = {String.class.getName(), String.class.getName()};
    private static final String[] ONE_STRING = {String.class.getName()};

    @Configuration
    public Option[] config() {
        return new Option[] {applianceOnFreePorts(), 
            CoreOptions.systemProperty("rnbd.itest.reports").value(new File("target/observability").getAbsolutePath())};
    }

    // ---- JMX --------------------------------------------------------------------------------

    @Test
    public void jmxOverRmiShowsWhatTheConsoleShowsAndRunsItsOperations() throws Exception {
        awaitApplianceUp();
        try (JMXConnector connector = connectJmx("karaf", "karaf")) {
            MBeanServerConnection jmx = connector.getMBeanServerConnection();
            ObjectName p1 = pathMBean(path1());
            awaitRegistered(jmx, p1, true);
            assertEquals("CONNECTED", jmx.getAttribute(p1, "State"));
            assertEquals("soft0", jmx.getAttribute(p1, "HcaName"));
            assertEquals("CONNECTED", jmx.getAttribute(
                    new ObjectName("io.rnbd:type=rtrs-client-session,session=" + SESSION), "State"));
            assertEquals("ONLINE", jmx.getAttribute(new ObjectName("io.rnbd:type=rnbd-export,export=mem0"), "State"));
            assertEquals("MAPPED", jmx.getAttribute(new ObjectName("io.rnbd:type=rnbd-device,device=rnbd0"), "State"));
            assertEquals(List.of("rnbd0"), List.of((String[]) jmx.getAttribute(
                    new ObjectName("io.rnbd:type=nbd-gateway"), "Exports")));
            CompositeData latency = (CompositeData) jmx.getAttribute(p1, "IoLatency");
            assertEquals(((long[]) latency.get("counts")).length, ((double[]) latency.get("bounds_seconds")).length + 1);

            // a path taken down and brought back through JMX; the console sees the same
            ObjectName client = new ObjectName("io.rnbd:type=rtrs-client");
            jmx.invoke(client, "disconnectPath", new Object[] {SESSION, path1()}, TWO_STRINGS);
            awaitAttribute(jmx, p1, "State", "CLOSED");
            assertTrue(run("rtrs:paths " + SESSION), rowOf(run("rtrs:paths " + SESSION), path1()).contains(" closed "));
            jmx.invoke(client, "reconnectPath", new Object[] {SESSION, path1()}, TWO_STRINGS);
            awaitAttribute(jmx, p1, "State", "CONNECTED");
            String unknown = message(() -> jmx.invoke(client, "resetStats", new Object[] {"nope"}, ONE_STRING));
            assertTrue(unknown, unknown.contains("no session") && unknown.contains("nope"));

            // issue 38: the authentication method through the client's admin service, kept in its configuration
            org.osgi.service.cm.ConfigurationAdmin cm = waitForService(org.osgi.service.cm.ConfigurationAdmin.class,
                    null, TIMEOUT_MS);
            assertEquals("client: new paths authenticate with none",
                    jmx.invoke(client, "setAuthMethod", new Object[] {"client", "none"}, TWO_STRINGS));
            assertEquals("none", cm.getConfiguration("io.rnbd.rtrs.client", "?").getProperties().get("auth.method"));
            String notThere = message(() -> jmx.invoke(client, "setAuthMethod", new Object[] {"client", "chap"},
                    TWO_STRINGS));
            assertTrue(notThere, notThere.contains("EINVAL: unknown authenticator 'chap' (registered: none; or default)"));
            assertEquals("client: new paths authenticate with the best-ranked authenticator present",
                    jmx.invoke(client, "setAuthMethod", new Object[] {"client", "default"}, TWO_STRINGS));
            assertEquals(null, cm.getConfiguration("io.rnbd.rtrs.client", "?").getProperties().get("auth.method"));

            // an export and a mapping through JMX: the admin services' operations, as the console's (configurations)
            ObjectName server = new ObjectName("io.rnbd:type=rnbd-server");
            ObjectName rnbdClient = new ObjectName("io.rnbd:type=rnbd-client");
            String added = (String) jmx.invoke(server, "addExport", new Object[] {"jmx1", "memory", "16m", "", false, false},
                    new String[] {"java.lang.String", "java.lang.String", "java.lang.String", "java.lang.String",
                        "boolean", "boolean"});
            assertTrue(added, added.startsWith("export jmx1 added"));
            ObjectName export = new ObjectName("io.rnbd:type=rnbd-export,export=jmx1");
            awaitAttribute(jmx, export, "State", "ONLINE");
            String mapped = (String) jmx.invoke(rnbdClient, "map", new Object[] {"rnbdjmx", SESSION, "jmx1", "RO"},
                    new String[] {"java.lang.String", "java.lang.String", "java.lang.String", "java.lang.String"});
            assertTrue(mapped, mapped.startsWith("rnbdjmx mapped: jmx1 over " + SESSION + ", RO"));
            ObjectName device = new ObjectName("io.rnbd:type=rnbd-device,device=rnbdjmx");
            awaitAttribute(jmx, device, "State", "MAPPED");
            assertEquals("RO", jmx.getAttribute(device, "AccessMode"));
            assertEquals(16L << 20, jmx.getAttribute(device, "Size"));
            assertTrue(rowOf(run("rnbd:devices"), "rnbdjmx").contains(" mapped "));
            assertTrue(String.valueOf(jmx.getAttribute(new ObjectName(
                    "io.rnbd:type=rnbd-export-opener,export=jmx1,session=" + SESSION), "AccessMode")).equals("RO"));
            // the services' refusals come back as they are, errno first; an argument is only ever a name
            String refused = message(() -> jmx.invoke(server, "removeExport", new Object[] {"jmx1"}, ONE_STRING));
            assertTrue(refused, refused.contains("EBUSY") && refused.contains("open by " + SESSION));
            String injected = message(() -> jmx.invoke(rnbdClient, "unmap", new Object[] {"--force"}, ONE_STRING));
            assertTrue(injected, injected.contains("ENOENT: no mapped device '--force'"));
            String spaced = message(() -> jmx.invoke(rnbdClient, "unmap", new Object[] {"rnbdjmx; x"}, ONE_STRING));
            assertTrue(spaced, spaced.contains("EINVAL"));
            assertEquals("rnbdjmx unmapped", jmx.invoke(rnbdClient, "unmap", new Object[] {"rnbdjmx"}, ONE_STRING));
            awaitRegistered(jmx, device, false);
            assertEquals("export jmx1 removed", jmx.invoke(server, "removeExport", new Object[] {"jmx1"}, ONE_STRING));
            awaitRegistered(jmx, export, false);
        }
        String denied = message(() -> connectJmx("karaf", "wrong").close());
        assertTrue(denied, denied.contains("Authentication failed"));
    }

    // ---- /metrics ---------------------------------------------------------------------------

    @Test
    public void metricsAreScrapedOverHttpAndReadByThePrometheusParser() throws Exception {
        String why = PromParser.unavailable();
        Assume.assumeTrue("skipped: " + why, why == null);
        awaitApplianceUp();
        io.rnbd.rnbd.api.RemoteBlockDevice rnbd0 = waitForDevice("rnbd0");
        int ios = 40;
        for (int i = 0; i < ios / 2; i++) {
            rnbd0.write(i * 4096L, ByteBuffer.allocate(4096), false).get(10, TimeUnit.SECONDS);
            rnbd0.read(i * 4096L, ByteBuffer.allocate(4096)).get(10, TimeUnit.SECONDS);
        }
        HttpResponse<String> scrape = get("/metrics");
        assertEquals(200, scrape.statusCode());
        assertTrue(scrape.headers().firstValue("Content-Type").orElse(""),
                scrape.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        Map<String, PromParser.Family> metrics = PromParser.parse(scrape.body());

        List<String> problems = new ArrayList<>();
        for (TableSchema schema : telemetry().schemas()) {
            for (Column c : schema.columns()) {
                if (c.type() != ColumnType.ID && !metrics.containsKey(parsedFamily(schema, c))) {
                    problems.add(schema.name() + "." + c.key() + ": no " + schema.family(c));
                }
            }
        }
        assertEquals(List.of(), problems);

        Map<String, Object> p1 = Map.of("session", SESSION, "path", path1());
        assertEquals(1.0, value(metrics, "rnbd_rtrs_client_path_state", with(p1, "state", "CONNECTED")), 0);
        assertEquals(0.0, value(metrics, "rnbd_rtrs_client_path_state", with(p1, "state", "CLOSED")), 0);
        Map<String, Object> dev = Map.of("device", "rnbd0");
        Map<String, Object> console = device(run("rnbd:devices --json"), "rnbd0");
        Map<String, Object> stats = JsonText.object(console.get("stats"));
        assertEquals(((Number) stats.get("reads")).doubleValue(), value(metrics, "rnbd_device_reads_total", dev), 0);
        assertEquals(((Number) stats.get("write_bytes")).doubleValue(),
                value(metrics, "rnbd_device_write_bytes_total", dev), 0);
        double count = value(metrics, "rnbd_device_io_latency_seconds_count", dev);
        assertTrue("the device's latency histogram counted our " + ios + " IOs: " + count, count >= ios);
        assertEquals(count, value(metrics, "rnbd_device_io_latency_seconds_bucket", with(dev, "le", "+Inf")), 0);
        assertTrue(value(metrics, "rnbd_device_io_latency_seconds_sum", dev) > 0);
        assertEquals(1.0, value(metrics, "rnbd_export_opener_info",
                Map.of("export", "mem0", "session", SESSION, "access_mode", "RW")), 0);
        assertEquals(1.0, value(metrics, "rnbd_rdma_device_state", Map.of("device", "soft1", "state", "ACTIVE")), 0);
    }

    // ---- the console lists the telemetry tables ---------------------------------------------

    /**
     * The console's listings are the telemetry tables (issue 38): in the running distribution,
     * each listing's --json has exactly the console keys of its table's columns (a column added to
     * the catalog shows in the console, and nothing else does), with the same rows. JMX and
     * /metrics take every column by construction (RowMBean, the metrics test above).
     */
    @Test
    public void theConsoleListsTheTelemetryTables() throws Exception {
        awaitApplianceUp();
        List<String> problems = new ArrayList<>();
        compare(problems, "rdma:devices --json", "rdma_device", null);
        compare(problems, "rtrs:sessions --json", "rtrs_client_session", "paths");
        compare(problems, "rtrs:paths --json", "rtrs_client_path", null);
        compare(problems, "rtrs:server-sessions --json", "rtrs_server_session", "paths");
        compare(problems, "rnbd:exports --json", "rnbd_export", "openers");
        compare(problems, "rnbd:devices --json", "rnbd_device", null);
        compare(problems, "rtrs:mp-policies --json", "rtrs_mp_policy", null);
        compare(problems, "rnbd:backends --json", "rnbd_backend", null);
        assertEquals(String.join("\n", problems), List.of(), problems);
    }

    private void compare(List<String> problems, String command, String table, String nested) {
        TableSchema schema = telemetry().schemas().stream().filter(s -> s.name().equals(table)).findFirst().orElseThrow();
        Set<String> expected = new TreeSet<>();
        schema.columns().stream().map(Column::console).filter(k -> !k.isEmpty()).forEach(expected::add);
        List<Object> rows = JsonText.array(JsonText.parse(run(command)));
        if (rows.isEmpty()) {
            problems.add(command + ": no rows to compare");
        }
        List<String> ids = new ArrayList<>();
        for (Object row : rows) {
            Set<String> keys = new TreeSet<>();
            flatten("", JsonText.object(row), nested, keys);
            if (!keys.equals(expected)) {
                problems.add(command + ": keys " + keys + ", the table's console keys " + expected);
            }
            ids.add(String.valueOf(JsonText.object(row).get(schema.columns().get(0).console())));
        }
        List<String> tableIds = new ArrayList<>();
        telemetry().table(table).orElseThrow().rows().forEach(r -> tableIds.add(String.valueOf(r.get(0))));
        if (!new TreeSet<>(ids).equals(new TreeSet<>(tableIds))) {
            problems.add(command + ": rows " + ids + ", the table's " + tableIds);
        }
    }

    private static void flatten(String prefix, Map<String, Object> object, String nested, Set<String> keys) {
        for (Map.Entry<String, Object> e : object.entrySet()) {
            if (prefix.isEmpty() && e.getKey().equals(nested)) {
                continue; // another table's rows, compared on their own
            }
            if (e.getValue() instanceof Map && !e.getKey().equals("counters")) {
                flatten(prefix + e.getKey() + ".", JsonText.object(e.getValue()), null, keys);
            } else {
                keys.add(prefix + e.getKey());
            }
        }
    }

    // ---- the dashboard in a real browser -----------------------------------------------------

    @Test
    public void theDashboardInHeadlessChromiumShowsAFailoverAsItHappens() throws Exception {
        String why = Chromium.unavailable();
        Assume.assumeTrue("skipped: " + why, why == null);
        awaitApplianceUp();
        Path reports = Path.of(System.getProperty("rnbd.itest.reports"));
        Files.createDirectories(reports);
        String base = "http://127.0.0.1:" + httpPort() + "/rnbd/";
        String row = "document.querySelector('#paths tr[data-path=' + " + JsonText.quote(JsonText.quote(SESSION + "/"
                + path1())) + " + '] .state')";
        String state1 = "(() => { const s = " + row + "; return s ? s.dataset.state : 'no row'; })()";
        String events = "[...document.querySelectorAll('#events li')].map(li => li.textContent).join(' | ')";

        ExecutorService load = Executors.newSingleThreadExecutor();
        try (Chromium browser = new Chromium(1400, 1500, reports.resolve("chromium.log"))) {
            browser.navigate(base);
            browser.await("the login page", "location.pathname.endsWith('/login.html') && !!document.getElementById('login')",
                    TIMEOUT_MS, "location.href");
            browser.eval(login("karaf", "wrong"));
            browser.await("the refusal", "location.search.includes('failed') && !document.getElementById('failed').hidden",
                    TIMEOUT_MS, "location.href");
            browser.eval(login("karaf", "karaf"));
            browser.await("the dashboard with both paths connected", "document.body.dataset.page === 'dashboard' && "
                    + "document.querySelectorAll('#paths tr[data-path]').length === 2 && "
                    + "[...document.querySelectorAll('#paths tr[data-path] .state')].every(s => s.dataset.state === 'CONNECTED')",
                    TIMEOUT_MS, "location.href + ' ' + (document.getElementById('paths') || {}).textContent");
            assertEquals("karaf", browser.text("document.getElementById('user').textContent"));
            // issue 34: the registered policies, authenticators and backends, by name with their bundles
            browser.await("the swappable services listed", "!!document.querySelector("
                    + "'#providers tr[data-provider=\"rtrs_mp_policy/min-inflight\"]') && "
                    + "document.getElementById('providers').textContent.includes('rnbd-backend-memory')", TIMEOUT_MS,
                    "(document.getElementById('providers') || {}).textContent");

            // IO on both paths, then one of them taken away while the page watches
            Future<String> bench = load.submit(() -> executeCommand("rnbd:bench --rw randrw --qd 8 --runtime 16s rnbd0"));
            browser.await("IO rates on the chart", "document.querySelectorAll('#rate-legend span').length === 2 && "
                    + "!document.getElementById('rate-legend').textContent.includes(' – IOPS')", TIMEOUT_MS,
                    "document.getElementById('rate-legend').textContent");
            Thread.sleep(4000); // both paths on the chart for a while before the failure
            assertTrue(run("rtrs:path-disconnect " + SESSION + " " + path1()).startsWith("path disconnected"));
            long failed = System.nanoTime();
            browser.await(path1() + " CLOSED on the page", state1 + " === 'CLOSED'", 10_000, state1);
            long seenMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failed);
            assertTrue("the event list shows the change: " + browser.text(events),
                    browser.text(events).contains(path1() + ": CONNECTED → ") && browser.text(events).contains("→ CLOSED"));
            Thread.sleep(3000); // the other path takes the IO: let the chart show it
            browser.screenshot(reports.resolve("dashboard-failover.png"));

            assertTrue(run("rtrs:path-reconnect " + SESSION + " " + path1()).startsWith("path reconnecting"));
            browser.await(path1() + " CONNECTED again on the page", state1 + " === 'CONNECTED'", TIMEOUT_MS, state1);
            String benchOut = bench.get(60, TimeUnit.SECONDS);
            assertTrue(benchOut, benchOut.contains("errors 0"));
            Thread.sleep(2000);
            browser.screenshot(reports.resolve("dashboard.png"));
            System.out.println("the page showed the path CLOSED " + seenMs + " ms after rtrs:path-disconnect");
        } finally {
            load.shutdownNow();
            if (!rowOf(run("rtrs:paths " + SESSION), path1()).contains(" connected ")) {
                run("rtrs:path-reconnect " + SESSION + " " + path1());
            }
        }
        assertTrue(Files.size(reports.resolve("dashboard-failover.png")) > 10_000);
    }

    /**
     * A host setting that holds the gateway back (the Unix socket's send buffer, README "Host
     * tuning") is shown in the dashboard's "Host tuning" box with the command that fixes it, as
     * the gateway logs it, while the Unix listener is on; without one, the box stays hidden. The
     * host's own value decides which (CI's is the kernel's default, 212992: the box shows).
     */
    @Test
    public void theDashboardNamesAHostSettingThatHoldsTheGatewayBack() throws Exception {
        String why = Chromium.unavailable();
        Assume.assumeTrue("skipped: " + why, why == null);
        Path wmem = Path.of("/proc/sys/net/core/wmem_default");
        Assume.assumeTrue("skipped: no " + wmem, Files.isReadable(wmem));
        boolean short_ = Long.parseLong(new String(Files.readAllBytes(wmem)).trim()) < 1024 * 1024;
        awaitApplianceUp();
        org.osgi.service.cm.ConfigurationAdmin cm = waitForService(org.osgi.service.cm.ConfigurationAdmin.class, null,
                TIMEOUT_MS);
        org.osgi.service.cm.Configuration gw = cm.getConfiguration("io.rnbd.nbd.gateway", "?");
        java.util.Dictionary<String, Object> before = gw.getProperties();
        assertTrue("the feature configures the gateway", before != null);
        java.util.Hashtable<String, Object> withUnix = new java.util.Hashtable<>();
        for (java.util.Enumeration<String> k = before.keys(); k.hasMoreElements(); ) {
            String key = k.nextElement();
            withUnix.put(key, before.get(key));
        }
        Path sock = Files.createTempDirectory("rnbd-obs").resolve("nbd.sock");
        // the gateway removes its socket as it leaves it (asynchronously); the directory, the
        // test's own, goes when the container exits, empty by then (a socket left keeps it)
        sock.getParent().toFile().deleteOnExit();
        withUnix.put("unix.socket", sock.toString());
        String box = "(() => { const b = document.getElementById('tuning'); return b ? (b.hidden ? 'hidden' : "
                + "b.textContent) : 'no box'; })()";
        try (Chromium browser = new Chromium(1400, 900, Path.of(System.getProperty("rnbd.itest.reports"))
                .resolve("chromium-tuning.log"))) {
            browser.navigate("http://127.0.0.1:" + httpPort() + "/rnbd/");
            browser.await("the login page", "!!document.getElementById('login')", TIMEOUT_MS, "location.href");
            browser.eval(login("karaf", "karaf"));
            browser.await("the dashboard with the gateway", "document.body.dataset.page === 'dashboard' && "
                    + "document.querySelectorAll('#gateway tr').length > 1", TIMEOUT_MS, box);
            assertEquals("no Unix listener: nothing to tune", "hidden", browser.text(box));
            gw.update(withUnix);
            if (short_) {
                browser.await("the Host tuning box", box + ".includes('sysctl -w net.core.wmem_default=4194304')",
                        TIMEOUT_MS, box);
                browser.screenshot(Path.of(System.getProperty("rnbd.itest.reports")).resolve("dashboard-tuning.png"));
            } else {
                browser.await("the gateway on its Unix socket", "document.getElementById('gateway').textContent"
                        + ".includes(" + JsonText.quote(sock.toString()) + ")", TIMEOUT_MS, box);
                assertEquals("this host's net.core.wmem_default is raised: nothing to tune", "hidden", browser.text(box));
            }
        } finally {
            gw.update(before);
        }
    }

    private static String login(String user, String password) {
        return "document.getElementById('username').value = " + JsonText.quote(user) + ";"
                + "document.getElementById('password').value = " + JsonText.quote(password) + ";"
                + "document.getElementById('login').requestSubmit(); true";
    }

    // ---- nothing left behind -----------------------------------------------------------------

    @Test
    public void stoppingTheBundlesTakesMBeansServletsAndThreadsAway() throws Exception {
        awaitApplianceUp();
        MBeanServer jmx = waitForService(MBeanServer.class, null, TIMEOUT_MS);
        ObjectName ours = new ObjectName("io.rnbd:*");
        awaitMBeans(jmx, ours);
        awaitStatus("/metrics", 200);
        awaitStatus("/rnbd/login.html", 200);

        for (String name : new String[] {"telemetry-jmx", "telemetry-prometheus", "telemetry-dashboard", "telemetry"}) {
            Bundle b = bundle(name);
            b.stop();
            boolean all = name.equals("telemetry");
            if (all || name.equals("telemetry-jmx")) {
                assertEquals(name + " stopped: MBeans left", Set.of(), jmx.queryNames(ours, null));
                assertEquals(name + " stopped: refresh thread left", 0, threads("rnbd-telemetry-jmx"));
            }
            if (all || name.equals("telemetry-prometheus")) {
                awaitStatus("/metrics", 404);
            }
            if (all || name.equals("telemetry-dashboard")) {
                awaitStatus("/rnbd/login.html", 404);
                awaitStatus("/rnbd/api/state", 404);
            }
            b.start();
            awaitMBeans(jmx, ours);
            awaitStatus("/metrics", 200);
            awaitStatus("/rnbd/login.html", 200);
            assertEquals(name + " restarted", 1, threads("rnbd-telemetry-jmx"));
        }
    }

    private static long threads(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals(name)).count();
    }

    // ---- helpers ---------------------------------------------------------------------------

    private String run(String command) {
        return executeCommand(command).trim();
    }

    private Telemetry telemetry() {
        return waitForService(Telemetry.class, null, TIMEOUT_MS);
    }

    private void awaitApplianceUp() throws InterruptedException {
        waitForDevice("rnbd0");
        awaitCondition("both appliance paths connected and rnbd0 mapped",
                () -> rowOf(run("rtrs:sessions"), SESSION).contains(" 2/2 ")
                        && rowOf(run("rnbd:devices"), "rnbd0").contains(" mapped "),
                TIMEOUT_MS, () -> run("rtrs:paths") + "\n" + run("rnbd:devices"));
    }

    private static String path1() {
        return "127.0.0.1@127.0.0.1:" + rtrsPort();
    }

    private static ObjectName pathMBean(String path) throws Exception {
        return new ObjectName("io.rnbd:type=rtrs-client-path,session=" + SESSION + ",path=" + ObjectName.quote(path));
    }

    private static String rowOf(String table, String key) {
        return table.lines().filter(l -> (" " + l + " ").contains(" " + key + " ")).findFirst().orElse("");
    }

    private static Map<String, Object> device(String json, String name) {
        for (Object d : JsonText.array(JsonText.parse(json))) {
            if (name.equals(JsonText.object(d).get("name"))) {
                return JsonText.object(d);
            }
        }
        throw new AssertionError("no device " + name + " in " + json);
    }

    /**
     * A JMX connection through Karaf's RMI connector (its address from the connector itself:
     * Pax Exam moves its ports to free ones), retried while the connector is still starting.
     */
    private JMXConnector connectJmx(String user, String password) throws Exception {
        Map<String, Object> env = new HashMap<>();
        env.put(JMXConnector.CREDENTIALS, new String[] {user, password});
        MBeanServer local = waitForService(MBeanServer.class, null, TIMEOUT_MS);
        ObjectName connector = awaitMBeans(local, new ObjectName("connector:name=rmi")).iterator().next();
        JMXServiceURL url = (JMXServiceURL) local.getAttribute(connector, "Address");
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (true) {
            try {
                return JMXConnectorFactory.connect(url, env);
            } catch (IOException e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(200); // the RMI connector starts in a thread of its own
            }
        }
    }

    private static void awaitRegistered(MBeanServerConnection jmx, ObjectName name, boolean registered)
            throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (jmx.isRegistered(name) != registered) {
            if (System.nanoTime() > end) {
                fail(name + (registered ? " never registered" : " never unregistered"));
            }
            Thread.sleep(100); // the MBeans follow the rows on a one-second refresh
        }
    }

    private static void awaitAttribute(MBeanServerConnection jmx, ObjectName name, String attribute, Object expected)
            throws Exception {
        awaitRegistered(jmx, name, true);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        Object now;
        while (!expected.equals(now = jmx.getAttribute(name, attribute))) {
            if (System.nanoTime() > end) {
                fail(name + " " + attribute + " is " + now + ", not " + expected);
            }
            Thread.sleep(100);
        }
    }

    private static Set<ObjectName> awaitMBeans(MBeanServer jmx, ObjectName pattern) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        Set<ObjectName> found;
        while ((found = jmx.queryNames(pattern, null)).isEmpty()) {
            if (System.nanoTime() > end) {
                fail("no MBean " + pattern);
            }
            Thread.sleep(100);
        }
        return found;
    }

    interface Call {
        void run() throws Exception;
    }

    /** The messages of what {@code call} threw, causes included; fails if it threw nothing. */
    private static String message(Call call) {
        try {
            call.run();
        } catch (Exception e) {
            StringBuilder sb = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                sb.append(t).append(" / ");
            }
            return sb.toString();
        }
        throw new AssertionError("expected a failure");
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort()
                + path)).timeout(java.time.Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void awaitStatus(String path, int status) throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        int now;
        while ((now = get(path).statusCode()) != status) {
            if (System.nanoTime() > end) {
                fail(path + " answers " + now + ", not " + status);
            }
            Thread.sleep(100); // the whiteboard (un)registers servlets on its own thread
        }
    }

    /** Whether a sample line starting with {@code start} is in the scrape, with label {@code label} when not null. */
    private static boolean hasSample(String scrape, String start, String label) {
        return scrape.lines().anyMatch(l -> l.startsWith(start) && (label == null
                || l.contains("{" + label + "=\"") || l.contains("," + label + "=\"")));
    }

    /** Python's parser names a counter's family without _total. */
    private static String parsedFamily(TableSchema schema, Column c) {
        String family = schema.family(c);
        return c.type() == ColumnType.COUNTER || c.type() == ColumnType.COUNTERS
                ? family.substring(0, family.length() - "_total".length()) : family;
    }

    private static Map<String, Object> with(Map<String, Object> labels, String key, String value) {
        Map<String, Object> m = new TreeMap<>(labels);
        m.put(key, value);
        return m;
    }

    private static double value(Map<String, PromParser.Family> metrics, String sample, Map<String, Object> labels) {
        for (PromParser.Family f : metrics.values()) {
            for (PromParser.Sample s : f.samples()) {
                if (s.name().equals(sample) && new TreeMap<>(s.labels()).equals(new TreeMap<>(labels))) {
                    return s.value();
                }
            }
        }
        throw new AssertionError("no sample " + sample + labels);
    }
}
