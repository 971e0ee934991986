package io.rnbd.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceRegistration;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;

/**
 * Issue #6, authentication in the running appliance: the authenticator bundle is swapped
 * (none stopped, chap installed) under an established, busy session, which keeps running
 * while a new path authenticates with chap; a client session whose key is wrong fails
 * with EKEYREJECTED after exactly one attempt; one whose host has no key fails with ENOKEY.
 * Client and server share one container and so one key store: the wrong key is what a
 * counting wrapper around the chap authenticator hands the client side (the host exchange
 * is made while the host's key is briefly a different one), the server keeps the right one.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class AuthIT extends KarafTestSupport {

    private static final int ENOKEY = 126;
    private static final int EKEYREJECTED = 129;
    private static final Pattern HOST_ID = Pattern.compile("\"host_id\":\"([^\"]*)\"");

    @Configuration
    public Option[] config() {
        return new Option[] {applianceOnFreePorts()};
    }

    @Test
    public void establishedSessionKeepsRunningWhileTheAuthenticatorIsSwapped() throws Exception {
        RemoteBlockDevice device = settledAppliance();
        RtrsClientAdmin client = waitForService(RtrsClientAdmin.class, null, TIMEOUT_MS);
        noneInForce();
        String hostId = applianceHostId();
        try (VerifiedIo io = new VerifiedIo(device, 0, 4096, 2048, 4).start()) {
            io.awaitProgress(200, TIMEOUT_MS);

            Chap keys = chapInForce();
            io.awaitProgress(200, TIMEOUT_MS);
            io.assertClean("IO while none was stopped and chap started");
            assertEquals("appliance session after the swap", 2, connectedPaths(client, "appliance"));

            // a new path authenticates with the new bundle: with a key it connects ...
            keys.putFreshKey(hostId);
            String withKey = "127.0.0.1@127.0.0.2:" + rtrsPort();
            assertTrue(executeCommand("rtrs:path-add appliance " + withKey).startsWith("path added"));
            awaitCondition("new path " + withKey + " connected through chap",
                    () -> pathState(client, "appliance", withKey) == PathState.CONNECTED, TIMEOUT_MS,
                    () -> executeCommand("rtrs:paths appliance"));

            // ... and once the host's key is gone the next new path is refused, ENOKEY, the others run on
            assertTrue(keys.remove(hostId));
            String withoutKey = "127.0.0.2@127.0.0.1:" + rtrsPort();
            executeCommand("rtrs:path-add appliance " + withoutKey);
            awaitCondition("new path " + withoutKey + " refused with ENOKEY",
                    () -> pathError(client, "appliance", withoutKey) == ENOKEY, TIMEOUT_MS,
                    () -> executeCommand("rtrs:paths appliance"));
            io.awaitProgress(200, TIMEOUT_MS);
            assertEquals(SessionState.CONNECTED, client.session("appliance").orElseThrow().state());
            assertEquals(3, connectedPaths(client, "appliance"));

            executeCommand("rtrs:path-remove appliance " + withoutKey);
            executeCommand("rtrs:path-remove appliance " + withKey);
            io.awaitProgress(200, TIMEOUT_MS);
            io.stop();
            io.verifyAll();
            io.assertClean("IO across the authenticator swap and the new paths");
        }
    }

    @Test
    public void wrongKeyFailsTheSessionWithEkeyrejectedAfterOneAttempt() throws Exception {
        settledAppliance();
        Chap keys = chapInForce();
        keys.putFreshKey("itest-wrong");
        CountingChap wrapper = new CountingChap(waitForService(Authenticator.class, "(rtrs.auth=chap)", TIMEOUT_MS),
                keys, "itest-wrong");
        ServiceRegistration<Authenticator> registration = register(wrapper);
        org.osgi.service.cm.Configuration session = null;
        try {
            session = clientSession("itest-wrong");
            RtrsClientAdmin client = waitForService(RtrsClientAdmin.class, null, TIMEOUT_MS);
            awaitFailed(client, "itest-wrong", EKEYREJECTED);
            // the reconnect delay is 1 s (at most 1.5 s with jitter): a retry would have come by now
            Thread.sleep(4_000); // proving an absence: nothing to wait for
            assertEquals("connection attempts (authentications) of session itest-wrong", 1,
                    wrapper.initiated("itest-wrong"));
            assertEquals(SessionState.FAILED, client.session("itest-wrong").orElseThrow().state());
            assertConsoleShows("itest-wrong", EKEYREJECTED, "EKEYREJECTED");
        } finally {
            if (session != null) {
                session.delete();
            }
            registration.unregister();
        }
    }

    @Test
    public void missingKeyFailsTheSessionWithEnokey() throws Exception {
        settledAppliance();
        Chap keys = chapInForce();
        keys.remove("itest-nokey");
        org.osgi.service.cm.Configuration session = null;
        try {
            session = clientSession("itest-nokey");
            RtrsClientAdmin client = waitForService(RtrsClientAdmin.class, null, TIMEOUT_MS);
            awaitFailed(client, "itest-nokey", ENOKEY);
            assertConsoleShows("itest-nokey", ENOKEY, "ENOKEY");
        } finally {
            if (session != null) {
                session.delete();
            }
        }
    }

    /**
     * The key commands come with rnbd-auth-chap (the shell being there) and work against the
     * running chap bundle straight away, with no bundle:refresh of anything.
     */
    @Test
    public void keyCommandsComeWithTheChapFeature() throws Exception {
        settledAppliance();
        chapInForce();
        awaitCondition("rtrs:auth-keys registered", () -> executeCommand("rtrs:auth-keys").startsWith("HOST ID"),
                TIMEOUT_MS, () -> executeCommand("rtrs:auth-keys"));
        String added = executeCommand("rtrs:auth-key-add --generate itest-console");
        assertTrue(added, added.startsWith("keys of host itest-console stored\nhost secret: DHHC-1:00:"));
        String json = executeCommand("rtrs:auth-keys --json");
        assertTrue(json, json.contains("{\"host_id\":\"itest-console\",\"transform\":\"none\",\"key_length\":32,"
                + "\"ctrl_key\":false,\"source\":\"file\"}") && !json.contains("DHHC"));
        assertEquals("keys of host itest-console removed", executeCommand("rtrs:auth-key-remove itest-console").trim());
        assertEquals("Error: no keys for host 'itest-console' in the keys file",
                executeCommand("rtrs:auth-key-remove itest-console").trim());
    }

    /**
     * rnbd0 mapped and both appliance paths connected, before any test puts chap in force.
     * rnbd0 appears once one path is up; the other may still be in its boot-time reconnect
     * loop (its device came up later), and its next attempt under chap, with no key for the
     * appliance's host, is refused with ENOKEY: terminal, as it must be.
     */
    private RemoteBlockDevice settledAppliance() throws InterruptedException {
        RemoteBlockDevice device = waitForDevice("rnbd0");
        RtrsClientAdmin client = waitForService(RtrsClientAdmin.class, null, TIMEOUT_MS);
        awaitCondition("both appliance paths connected", () -> connectedPaths(client, "appliance") == 2,
                3 * TIMEOUT_MS, () -> executeCommand("rtrs:paths appliance"));
        return device;
    }

    /** rnbd-auth-chap installed and rtrs-auth-none stopped, so chap is the one in force. */
    private Chap chapInForce() throws Exception {
        if (!featuresService.isInstalled(featuresService.getFeature("rnbd-auth-chap"))) {
            featuresService.installFeature("rnbd-auth-chap");
        }
        Bundle chap = bundle("rtrs-auth-chap");
        if (chap.getState() != Bundle.ACTIVE) {
            chap.start();
        }
        Chap keys = new Chap(this);
        Bundle none = bundle("rtrs-auth-none");
        if (none.getState() == Bundle.ACTIVE) {
            none.stop();
        }
        awaitCondition("no authenticator but chap", () -> authenticators().equals("chap"), TIMEOUT_MS,
                this::authenticators);
        return keys;
    }

    /** The boot state, whatever ran before: rtrs-auth-none in force, chap (if installed) stopped. */
    private void noneInForce() throws Exception {
        Bundle none = bundle("rtrs-auth-none");
        if (none.getState() != Bundle.ACTIVE) {
            none.start();
        }
        if (featuresService.isInstalled(featuresService.getFeature("rnbd-auth-chap"))) {
            bundle("rtrs-auth-chap").stop();
        }
        awaitCondition("no authenticator but none", () -> authenticators().equals("none"), TIMEOUT_MS,
                this::authenticators);
    }

    private String authenticators() {
        try {
            StringBuilder methods = new StringBuilder();
            var refs = bundleContext.getServiceReferences(Authenticator.class, null);
            for (var ref : refs) {
                methods.append(methods.length() == 0 ? "" : ",").append(ref.getProperty(Authenticator.PROP_METHOD));
            }
            return methods.toString();
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private ServiceRegistration<Authenticator> register(Authenticator wrapper) {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(Authenticator.PROP_METHOD, "chap");
        props.put(Constants.SERVICE_RANKING, 100);
        return bundleContext.registerService(Authenticator.class, wrapper, props);
    }

    /** One path to the appliance's own server, host id = session name, 1 s reconnect delay. */
    private org.osgi.service.cm.Configuration clientSession(String name) throws Exception {
        return factoryConfig("io.rnbd.rtrs.client.session", name, "session.name", name,
                "paths", "127.0.0.1@127.0.0.1:" + rtrsPort(), "host.id", name,
                "reconnect.delay.sec", "1", "max.reconnect.attempts", "-1");
    }

    private void awaitFailed(RtrsClientAdmin client, String name, int errno) throws InterruptedException {
        awaitCondition("session " + name + " FAILED with errno " + errno, () -> {
            RtrsClientSessionInfo s = client.session(name).orElse(null);
            return s != null && s.state() == SessionState.FAILED && s.lastError() == errno;
        }, 2 * TIMEOUT_MS, () -> executeCommand("rtrs:sessions"));
    }

    private void assertConsoleShows(String session, int errno, String errnoName) {
        String json = executeCommand("rtrs:sessions --json");
        assertTrue(json, json.contains("\"name\":\"" + session + "\",\"state\":\"FAILED\",\"last_error\":" + errno));
        String table = executeCommand("rtrs:sessions");
        String line = table.lines().filter(l -> l.startsWith(session + " ")).findFirst().orElse("");
        assertTrue(table, line.contains("failed") && line.contains(errnoName + " (" + errno + ")"));
    }

    private String applianceHostId() {
        String json = executeCommand("rtrs:server-sessions --json");
        Matcher m = HOST_ID.matcher(json);
        assertTrue("no host id in " + json, m.find());
        return m.group(1);
    }

    private static int connectedPaths(RtrsClientAdmin client, String session) {
        return (int) client.session(session).map(s -> s.paths().stream()
                .filter(p -> p.state() == PathState.CONNECTED).count()).orElse(0L).longValue();
    }

    private static PathState pathState(RtrsClientAdmin client, String session, String path) {
        RtrsClientPathInfo p = path(client, session, path);
        return p == null ? null : p.state();
    }

    private static int pathError(RtrsClientAdmin client, String session, String path) {
        RtrsClientPathInfo p = path(client, session, path);
        return p == null ? 0 : p.lastError();
    }

    private static RtrsClientPathInfo path(RtrsClientAdmin client, String session, String path) {
        return client.session(session).flatMap(s -> s.paths().stream()
                .filter(p -> p.name().equals(path)).findFirst()).orElse(null);
    }

    /**
     * The chap authenticator, counting host-side exchanges per host id; for {@code wrongHost}
     * the host exchange is made while that host's key is a different, fresh one, so the
     * client answers with a key the server does not hold.
     */
    private static final class CountingChap implements Authenticator {
        private final Authenticator chap;
        private final Chap keys;
        private final String wrongHost;
        private final Map<String, AtomicInteger> initiated = new ConcurrentHashMap<>();

        CountingChap(Authenticator chap, Chap keys, String wrongHost) {
            this.chap = chap;
            this.keys = keys;
            this.wrongHost = wrongHost;
        }

        int initiated(String hostId) {
            AtomicInteger n = initiated.get(hostId);
            return n == null ? 0 : n.get();
        }

        @Override
        public String method() {
            return chap.method();
        }

        @Override
        public synchronized AuthExchange initiate(String hostId) throws AuthException {
            initiated.computeIfAbsent(hostId, h -> new AtomicInteger()).incrementAndGet();
            if (!hostId.equals(wrongHost)) {
                return chap.initiate(hostId);
            }
            try {
                keys.putFreshKey(hostId);
                AuthExchange exchange = chap.initiate(hostId);
                keys.putFreshKey(hostId);
                return exchange;
            } catch (java.io.IOException e) {
                throw new AuthException(5, "test key rotation failed: " + e.getMessage());
            }
        }

        @Override
        public AuthExchange respond() {
            return chap.respond();
        }
    }

    /**
     * Everything that touches the chap bundle's API. A class of its own, loaded only once
     * the bundle is installed: the test class itself must load without it (JUnit reads
     * its methods before any test installs chap).
     */
    private static final class Chap {
        private final ChapKeyAdmin admin;

        Chap(KarafTestSupport test) {
            this.admin = test.waitForService(ChapKeyAdmin.class, null, TIMEOUT_MS);
        }

        void putFreshKey(String hostId) throws java.io.IOException {
            admin.put(hostId, ChapSecrets.generate(0, 32), null);
        }

        boolean remove(String hostId) throws java.io.IOException {
            return admin.remove(hostId);
        }
    }
}
