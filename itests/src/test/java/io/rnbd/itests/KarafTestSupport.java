package io.rnbd.itests;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.vmOptions;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.karafDistributionConfiguration;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.logLevel;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import javax.inject.Inject;

import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.karaf.options.LogLevelOption.LogLevel;
import org.osgi.framework.AllServiceListener;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.util.tracker.ServiceTracker;

/**
 * What every integration test shares: the container (the built distribution, offline from the
 * build's local Maven repository, on free ports), console commands, service waits and the
 * feature assertion. {@code @Configuration} runs in the failsafe JVM, the tests inside Karaf.
 */
public abstract class KarafTestSupport {

    protected static final long TIMEOUT_MS = 30_000;

    /** How long a feature's components may take to settle after the install returned. */
    protected static final long SETTLE_MS = 10_000;

    /** Karaf's own boot features without rnbd-appliance: a clean container to install into. */
    protected static final String MINIMAL_BOOT_FEATURES =
            "instance,package,log,ssh,framework,system,eventadmin,feature,shell,service,jaas,"
                    + "deployer,diagnostic,bundle,config,scr";

    /**
     * What karaf-assembly/pom.xml boots (keep the two in step; eventadmin is its startup feature,
     * which Karaf lists among the boot features too).
     */
    protected static final String APPLIANCE_BOOT_FEATURES = MINIMAL_BOOT_FEATURES + ",rnbd-appliance";

    /** The JVM flags of bin/karaf (Pax Exam starts java itself) plus bin/setenv's. */
    private static final String[] KARAF_JVM_FLAGS = {
        "--add-reads=java.xml=java.logging",
        "--add-opens=java.base/java.security=ALL-UNNAMED",
        "--add-opens=java.base/java.net=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.naming/javax.naming.spi=ALL-UNNAMED",
        "--add-opens=java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.protocol.file=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.protocol.ftp=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.protocol.http=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.protocol.https=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.protocol.jar=ALL-UNNAMED",
        "--add-exports=java.base/sun.net.www.content.text=ALL-UNNAMED",
        "--add-exports=jdk.xml.dom/org.w3c.dom.html=ALL-UNNAMED",
        "--add-exports=jdk.naming.rmi/com.sun.jndi.url.rmi=ALL-UNNAMED",
        "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
        "--add-exports=java.security.sasl/com.sun.security.sasl=ALL-UNNAMED",
        "--add-exports=java.naming/com.sun.jndi.ldap=ALL-UNNAMED",
        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    };

    @Inject
    protected BundleContext bundleContext;

    @Inject
    protected FeaturesService featuresService;

    @Inject
    protected SessionFactory sessionFactory;

    @Inject
    protected ServiceComponentRuntime scr;

    /**
     * The distribution as the build made it, with its etc/ profile, booting the appliance.
     * The boot features go in a stage of their own, before the one Pax Exam appends for its
     * remote bundle context: otherwise the test probe can arrive while the boot deployment
     * still holds Karaf's resolver hook, and fails with "Resolver hook prevented resolution".
     */
    protected static Option distribution() {
        return bootStaged(APPLIANCE_BOOT_FEATURES);
    }

    /**
     * The distribution booted without rnbd-appliance and blind to the default profile in etc/
     * (io.rnbd.* files), so that a feature installed alone meets no configuration it did not
     * bring itself.
     */
    protected static Option cleanDistribution() {
        return composite(
                bootStaged(MINIMAL_BOOT_FEATURES),
                editConfigurationFilePut("etc/config.properties", "felix.fileinstall.filter",
                        "(?!io\\.rnbd\\.).*\\.(cfg|config|json)"));
    }

    private static Option bootStaged(String bootFeatures) {
        String dist = required("rnbd.distribution");
        String repo = required("rnbd.localRepository");
        String mvnCfg = "etc/org.ops4j.pax.url.mvn.cfg";
        return composite(
                karafDistributionConfiguration()
                        .frameworkUrl(new File(dist).toURI().toString())
                        .karafVersion(required("karaf.version"))
                        .name("RNBD appliance")
                        .unpackDirectory(new File("target/exam"))
                        .useDeployFolder(false),
                configureConsole().ignoreLocalConsole(),
                logLevel(LogLevel.INFO),
                editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.localRepository", repo),
                editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.repositories", ""),
                editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.offline", "true"),
                editConfigurationFilePut("etc/org.apache.karaf.shell.cfg", "sshPort", Integer.toString(Ports.free())),
                editConfigurationFilePut("etc/org.apache.karaf.features.cfg", "featuresBoot", "(" + bootFeatures + ")"),
                observabilityOnFreePorts(),
                vmOptions(KARAF_JVM_FLAGS));
    }

    /**
     * Karaf's HTTP port (/metrics, the dashboard) on a free port rather than 8181, handed to the
     * tests as system property rnbd.itest.http.port. (Pax Exam itself moves the JMX RMI ports
     * to free ones: the tests read the connector's address.)
     */
    private static Option observabilityOnFreePorts() {
        int http = Ports.free();
        return composite(
                editConfigurationFilePut("etc/org.ops4j.pax.web.cfg", "org.osgi.service.http.port", Integer.toString(http)),
                org.ops4j.pax.exam.CoreOptions.systemProperty("rnbd.itest.http.port").value(Integer.toString(http)));
    }

    /** Karaf's HTTP port in the container (see {@link #observabilityOnFreePorts()}). */
    protected static int httpPort() {
        return Integer.parseInt(System.getProperty("rnbd.itest.http.port"));
    }

    private static String required(String key) {
        String value = System.getProperty(key);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + key + " is not set: run the itests through Maven (failsafe)");
        }
        return value;
    }

    /** Runs a console command as the shell would and returns what it printed (out and err). */
    protected String executeCommand(String command) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Session session = sessionFactory.create(System.in, out, out);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            Future<Object> result = executor.submit(() -> session.execute(command));
            result.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            fail("command did not finish within " + TIMEOUT_MS + " ms: " + command);
        } catch (Exception e) {
            out.println("Error: " + e);
        } finally {
            session.close();
            executor.shutdownNow();
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /**
     * Waits for a service matching the class and an optional LDAP filter; fails on timeout. The
     * test keeps using the service until the container stops.
     */
    protected <T> T waitForService(Class<T> type, String filter, long timeoutMs) {
        String spec = "(" + Constants.OBJECTCLASS + "=" + type.getName() + ")";
        if (filter != null && !filter.isEmpty()) {
            spec = "(&" + spec + filter + ")";
        }
        ServiceTracker<T, T> tracker;
        try {
            Filter osgiFilter = FrameworkUtil.createFilter(spec);
            tracker = new ServiceTracker<>(bundleContext, osgiFilter, null);
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("bad filter " + spec, e);
        }
        tracker.open();
        try {
            assertNotNull("no service " + spec + " within " + timeoutMs + " ms", tracker.waitForService(timeoutMs));
            // our own use of the service, so that closing the tracker does not release it
            return bundleContext.getService(tracker.getServiceReference());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + spec, e);
        } finally {
            tracker.close();
        }
    }

    /**
     * Installs a feature and asserts that every bundle it brought is active and every DS
     * component of those bundles is satisfied (or waits for a configuration it requires).
     */
    protected void installAndAssertFeature(String name) throws Exception {
        Set<Long> before = bundleIds();
        try {
            featuresService.installFeature(name);
        } catch (Exception e) {
            throw new AssertionError("feature " + name + " does not install: " + e.getMessage(), e);
        }
        assertTrue("feature " + name + " is not installed", featuresService.isInstalled(featuresService.getFeature(name)));
        List<Bundle> added = new ArrayList<>();
        for (Bundle bundle : bundleContext.getBundles()) {
            if (!before.contains(bundle.getBundleId())) {
                added.add(bundle);
            }
        }
        awaitNoProblems("feature " + name, () -> problems(added), SETTLE_MS);
    }

    protected Set<Long> bundleIds() {
        Set<Long> ids = new HashSet<>();
        for (Bundle bundle : bundleContext.getBundles()) {
            ids.add(bundle.getBundleId());
        }
        return ids;
    }

    /** One line per inactive bundle or unsatisfied component among the given bundles. */
    protected String problems(List<Bundle> bundles) {
        List<String> problems = new ArrayList<>();
        for (Bundle bundle : bundles) {
            boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int expected = fragment ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (bundle.getState() != expected) {
                problems.add("bundle " + bundle.getSymbolicName() + " is " + stateName(bundle.getState()));
                continue;
            }
            for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs(bundle)) {
                if (!scr.isComponentEnabled(description)) {
                    continue;
                }
                for (ComponentConfigurationDTO configuration : scr.getComponentConfigurationDTOs(description)) {
                    if (!satisfied(configuration)) {
                        problems.add("component " + description.name + " of " + bundle.getSymbolicName()
                                + " is " + componentState(configuration));
                    }
                }
            }
        }
        return String.join("\n", problems);
    }

    private static boolean satisfied(ComponentConfigurationDTO configuration) {
        return configuration.state == ComponentConfigurationDTO.ACTIVE
                || configuration.state == ComponentConfigurationDTO.SATISFIED
                // a factory or required configuration not given yet: waiting is correct
                || configuration.state == ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION;
    }

    private static String componentState(ComponentConfigurationDTO configuration) {
        switch (configuration.state) {
            case ComponentConfigurationDTO.UNSATISFIED_REFERENCE:
                return "missing references " + Arrays.stream(configuration.unsatisfiedReferences)
                        .map(r -> r.target == null ? r.name : r.name + " " + r.target)
                        .collect(Collectors.joining(", "));
            case ComponentConfigurationDTO.FAILED_ACTIVATION:
                return "failed to activate: " + configuration.failure;
            default:
                return "in state " + configuration.state;
        }
    }

    private static String stateName(int state) {
        switch (state) {
            case Bundle.INSTALLED: return "INSTALLED (unresolved)";
            case Bundle.RESOLVED: return "RESOLVED (not started)";
            case Bundle.STARTING: return "STARTING";
            case Bundle.STOPPING: return "STOPPING";
            case Bundle.ACTIVE: return "ACTIVE";
            default: return "UNINSTALLED";
        }
    }

    /**
     * Waits until {@code problems} reports none, re-checking on every service event (DS
     * components settle by registering services) and at least every 200 ms; fails with the
     * last problems on timeout.
     */
    protected void awaitNoProblems(String what, Supplier<String> problems, long timeoutMs) throws InterruptedException {
        Semaphore changed = new Semaphore(0);
        // An AllServiceListener: a plain ServiceListener makes the framework check whether each
        // service's class is visible to the probe, which wires the probe's DynamicImport-Package
        // to the bundle exporting it (javax.servlet, org.osgi.jmx ...); uninstalling that feature
        // then refreshes the probe under the running test ("Invalid BundleContext").
        AllServiceListener listener = event -> changed.release();
        bundleContext.addServiceListener(listener);
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            String current = problems.get();
            while (!current.isEmpty() && System.nanoTime() < deadline) {
                changed.tryAcquire(200, TimeUnit.MILLISECONDS);
                changed.drainPermits();
                current = problems.get();
            }
            if (!current.isEmpty()) {
                fail(what + ", still after " + timeoutMs + " ms:\n" + current);
            }
        } finally {
            bundleContext.removeServiceListener(listener);
        }
    }


    // ---- shared by the scenario tests (BackendSwapIT, HotSwapPolicyIT, AuthIT, StartOrderIT, ConsoleIT)

    /**
     * The appliance with its default profile on ports of its own (RTRS server, NBD gateway)
     * and a short reconnect delay for the appliance session, so the test does not wait out
     * the 2 s a path that came up before its device needs. The RTRS port is handed to the
     * test as system property {@code rnbd.itest.rtrs.port}.
     */
    protected static Option applianceOnFreePorts() {
        return composite(
                defaultProfileOnFreePorts(),
                editConfigurationFilePut("etc/io.rnbd.rtrs.client.session-appliance.cfg", "reconnect.delay.sec", "1"));
    }

    /**
     * The appliance exactly as shipped (karaf-assembly's etc/) but for its ports, so that tests
     * on a shared machine do not meet each other: the RTRS server's (system property
     * {@code rnbd.itest.rtrs.port}) and the NBD gateway's ({@code rnbd.itest.nbd.port}). What a
     * promise "on the default profile" is tested on (SwapIT).
     */
    protected static Option defaultProfileOnFreePorts() {
        int rtrsPort = Ports.free();
        int nbdPort = Ports.free();
        return composite(
                distribution(),
                editConfigurationFilePut("etc/io.rnbd.rtrs.server.cfg", "port", Integer.toString(rtrsPort)),
                editConfigurationFilePut("etc/io.rnbd.rtrs.client.session-appliance.cfg", "paths",
                        "127.0.0.1@127.0.0.1:" + rtrsPort + ",127.0.0.2@127.0.0.2:" + rtrsPort),
                editConfigurationFilePut("etc/io.rnbd.nbd.gateway.cfg", "port", Integer.toString(nbdPort)),
                org.ops4j.pax.exam.CoreOptions.systemProperty("rnbd.itest.rtrs.port").value(Integer.toString(rtrsPort)),
                org.ops4j.pax.exam.CoreOptions.systemProperty("rnbd.itest.nbd.port").value(Integer.toString(nbdPort)));
    }

    /** The NBD gateway's port {@link #defaultProfileOnFreePorts()} chose (inside the container). */
    protected static int nbdPort() {
        return Integer.parseInt(System.getProperty("rnbd.itest.nbd.port"));
    }

    /** The RTRS server port {@link #applianceOnFreePorts()} chose (inside the container). */
    protected static int rtrsPort() {
        return Integer.parseInt(System.getProperty("rnbd.itest.rtrs.port"));
    }

    /**
     * The mapped device {@code name} (a {@code RemoteBlockDevice}); fails with the console's
     * view of the appliance after 90 s. Declared generic so that no rnbd type appears in a
     * signature here: JUnit reads every method of the class hierarchy, and a container
     * without rnbd-api (cleanDistribution) must still load it.
     */
    @SuppressWarnings("unchecked")
    protected <T> T waitForDevice(String name) {
        try {
            return (T) waitForService(io.rnbd.rnbd.api.RemoteBlockDevice.class,
                    "(" + io.rnbd.rnbd.api.RemoteBlockDevice.PROP_NAME + "=" + name + ")", 3 * TIMEOUT_MS);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; the appliance says:\n" + applianceState());
        }
    }

    /** What the console shows of devices, sessions, paths and exports (for failure messages). */
    protected String applianceState() {
        StringBuilder state = new StringBuilder();
        for (String command : new String[] {"rdma:devices", "rtrs:sessions", "rtrs:paths",
                "rtrs:server-sessions", "rnbd:exports", "rnbd:devices"}) {
            state.append("> ").append(command).append('\n').append(executeCommand(command));
        }
        return state.toString();
    }

    /**
     * Creates (or replaces) the factory configuration {@code factoryPid~name} with the given
     * key/value pairs, as a .cfg file in etc/ would.
     */
    protected org.osgi.service.cm.Configuration factoryConfig(String factoryPid, String name, Object... keyValues)
            throws IOException {
        org.osgi.service.cm.ConfigurationAdmin configAdmin =
                waitForService(org.osgi.service.cm.ConfigurationAdmin.class, null, TIMEOUT_MS);
        org.osgi.service.cm.Configuration configuration = configAdmin.getFactoryConfiguration(factoryPid, name, "?");
        java.util.Hashtable<String, Object> properties = new java.util.Hashtable<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            properties.put((String) keyValues[i], keyValues[i + 1]);
        }
        configuration.update(properties);
        return configuration;
    }

    /** The installed bundle with this symbolic name; fails if there is none. */
    protected Bundle bundle(String symbolicName) {
        for (Bundle bundle : bundleContext.getBundles()) {
            if (symbolicName.equals(bundle.getSymbolicName())) {
                return bundle;
            }
        }
        throw new AssertionError("no bundle " + symbolicName);
    }

    /**
     * Waits until {@code condition} holds, checking every 50 ms; fails naming {@code what}
     * (and what {@code state} says then) on timeout.
     */
    protected void awaitCondition(String what, java.util.function.BooleanSupplier condition, long timeoutMs,
            Supplier<String> state) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail(what + " not within " + timeoutMs + " ms" + (state == null ? "" : "; now: " + state.get())
                        + recentWarnings(20));
            }
            Thread.sleep(50); // polling: the conditions are states of other bundles without events to wait on
        }
    }


    /** The container's karaf.log (inside the container only: karaf.data is Karaf's). */
    protected static java.nio.file.Path karafLog() {
        return java.nio.file.Paths.get(System.getProperty("karaf.data"), "log", "karaf.log");
    }

    /**
     * The last {@code n} WARN and ERROR lines of the container's log, for a failure message:
     * CI shows only what the test printed, and the container's folder is gone with the run.
     */
    protected static String recentWarnings(int n) {
        if (System.getProperty("karaf.data") == null) {
            return ""; // not inside the container
        }
        try (java.util.stream.Stream<String> lines = java.nio.file.Files.lines(karafLog())) {
            java.util.Deque<String> last = new java.util.ArrayDeque<>();
            lines.filter(l -> l.contains("| WARN ") || l.contains("| ERROR ")).forEach(l -> {
                last.addLast(l);
                if (last.size() > n) {
                    last.removeFirst();
                }
            });
            return last.isEmpty() ? "" : "\nlast warnings in karaf.log:\n" + String.join("\n", last);
        } catch (IOException | java.io.UncheckedIOException e) {
            return "\n(karaf.log unreadable: " + e + ")";
        }
    }

    /**
     * Runs a console command as a logged-in administrator would (user karaf with the roles
     * admin, manager, viewer, systembundles): Karaf hides the commands that change bundles
     * (bundle:update, bundle:stop ...) from a session without those roles.
     */
    protected String executeCommandAsAdmin(String command) {
        javax.security.auth.Subject subject = new javax.security.auth.Subject();
        subject.getPrincipals().add(karafPrincipal("UserPrincipal", "karaf"));
        for (String role : new String[] {"admin", "manager", "viewer", "systembundles"}) {
            subject.getPrincipals().add(karafPrincipal("RolePrincipal", role));
        }
        try {
            return javax.security.auth.Subject.doAs(subject,
                    (java.security.PrivilegedExceptionAction<String>) () -> executeCommand(command));
        } catch (java.security.PrivilegedActionException e) {
            throw new AssertionError("running " + command + ": " + e.getException(), e.getException());
        }
    }

    /** Karaf's JAAS principals, from the framework's boot class path (not a test dependency). */
    private java.security.Principal karafPrincipal(String type, String name) {
        try {
            return (java.security.Principal) getClass().getClassLoader()
                    .loadClass("org.apache.karaf.jaas.boot.principal." + type)
                    .getConstructor(String.class).newInstance(name);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("Karaf's " + type + " is not reachable: " + e, e);
        }
    }
}
