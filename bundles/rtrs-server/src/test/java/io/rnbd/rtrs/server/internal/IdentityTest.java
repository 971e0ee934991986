package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import io.rnbd.rtrs.auth.chap.internal.ChapAuthenticator;
import io.rnbd.rtrs.auth.chap.internal.ChapHash;
import io.rnbd.rtrs.auth.chap.internal.ChapKeyStore;
import io.rnbd.rtrs.auth.chap.internal.ChapSettings;
import io.rnbd.rtrs.auth.chap.internal.DhGroup;
import io.rnbd.rtrs.auth.chap.internal.DhchapKey;
import io.rnbd.rtrs.auth.chap.internal.HostKeys;
import io.rnbd.rtrs.auth.none.internal.NoneAuthenticator;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.testkit.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the server tells its upper layer about who a session is: the host id, whether an
 * authenticator proved it (CHAP) or it was only claimed (none) or absent (a Linux client),
 * and that every path of a session must present the identity its first path had.
 */
class IdentityTest {
    static final int QD = 4;
    static final int CHUNK = 16384;
    static final String KEY_A = ChapSecrets.generate(1, 32);
    static final String KEY_B = ChapSecrets.generate(1, 32);

    SoftDevice dev;
    ScheduledExecutorService timer;
    RtrsServer server;
    final AtomicReference<Authenticator> serverAuth = new AtomicReference<>();
    final List<SoftDevice> others = new java.util.ArrayList<>();

    void start(Authenticator auth) throws Exception {
        serverAuth.set(auth);
        dev = new SoftDevice("soft-id", InetAddress.getByName("127.0.0.1"));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = new RtrsServer(new ServerConfig(0, CHUNK, QD, true, 60_000, 5), () -> r -> r.complete(0),
                serverAuth::get, timer, System::nanoTime);
        server.add(dev);
    }

    /** Another source address: Linux's server (and ours) allows one path per pair of addresses. */
    SoftDevice other(int lastOctet) throws Exception {
        SoftDevice d = new SoftDevice("soft-id" + lastOctet, InetAddress.getByName("127.0.0." + lastOctet));
        others.add(d);
        return d;
    }

    @AfterEach
    void stop() throws Exception {
        others.forEach(SoftDevice::close);
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    /** A CHAP authenticator holding {@code keys} (host id to DHHC-1 secret). */
    static Authenticator chap(Map<String, String> keys) throws Exception {
        Map<String, HostKeys> m = new HashMap<>();
        for (Map.Entry<String, String> e : keys.entrySet()) {
            m.put(e.getKey(), new HostKeys(DhchapKey.parse(e.getValue()), null));
        }
        ChapKeyStore store = new ChapKeyStore();
        store.setConfigKeys(m);
        return new ChapAuthenticator(store, new SecureRandom(),
                new ChapSettings("target0", List.of(ChapHash.SHA256), List.of(DhGroup.NULL)));
    }

    static Authenticator serverChap() throws Exception {
        return chap(Map.of("host-a", KEY_A, "host-b", KEY_B));
    }

    ServerSession session(String name) {
        return server.session(name).orElseThrow(() -> new AssertionError("no session " + name));
    }

    /** INFO_REQ on a path the server must refuse: it closes the path instead of answering. */
    static void infoRefused(RawClient c, String name) throws Exception {
        c.cons[0].send(InfoReq.SIZE, new InfoReq(name)::encode);
        CmEvent e = c.cons[0].event();
        assertEquals(CmEvent.Type.DISCONNECTED, e.type(), "the server closes the path: " + e);
    }

    @Test
    void chapProvesTheHostId() throws Exception {
        start(serverChap());
        try (RawClient c = new RawClient(dev).withExtensions().open(addr(), 2)) {
            assertEquals(0, c.authenticate(chap(Map.of("host-a", KEY_A)), "host-a"));
            c.info("sa");
            ServerSession s = session("sa");
            assertEquals("host-a", s.hostId());
            assertTrue(s.hostIdProven(), "CHAP proves the id");
            assertEquals("chap", s.authMethod());
        }
    }

    /** host-a's key presented under host-b's name: CHAP refuses the response, no session comes up. */
    @Test
    void aClientClaimingAnotherHostsIdWithoutItsKeyIsRefused() throws Exception {
        start(serverChap());
        try (RawClient c = new RawClient(dev).withExtensions().open(addr(), 1)) {
            assertEquals(Errno.EKEYREJECTED, c.authenticate(chap(Map.of("host-b", KEY_A)), "host-b"));
            // the server waits for the host to give up (or for the handshake deadline, HandshakeDeadlineTest)
            assertTrue(server.sessions().stream().noneMatch(s -> s.hostId().equals("host-b")),
                    server.sessions().toString());
            assertEquals(0, server.session("").orElseThrow().pathCount(), "no path of it connected");
        }
    }

    @Test
    void theNoneAuthenticatorOnlyClaims() throws Exception {
        start(new NoneAuthenticator());
        try (RawClient c = new RawClient(dev).withExtensions().open(addr(), 1)) {
            assertEquals(0, c.authenticate(new NoneAuthenticator(), "host-a"));
            c.info("claimer");
            ServerSession s = session("claimer");
            assertEquals("host-a", s.hostId());
            assertFalse(s.hostIdProven(), "'none' proves nothing");
            assertEquals("none", s.authMethod());
        }
    }

    @Test
    void aLinuxClientHasNoIdentity() throws Exception {
        start(null);
        try (RawClient c = new RawClient(dev).connect(addr(), 2, "linux1")) {
            ServerSession s = session("linux1");
            assertEquals("", s.hostId());
            assertFalse(s.hostIdProven());
            assertEquals("", s.authMethod());
        }
    }

    /**
     * A second path joins a session by its uuid, which is no secret: it must present the id
     * the session's first path proved, and prove it. Another host's valid key, or a claim
     * made after the authenticator was swapped to none, is refused with a log line.
     */
    @Test
    void everyPathOfASessionMustProveTheSessionsHostId() throws Exception {
        start(serverChap());
        try (RawClient first = new RawClient(dev).withExtensions().open(addr(), 1);
             LogCapture log = LogCapture.start()) {
            assertEquals(0, first.authenticate(chap(Map.of("host-a", KEY_A)), "host-a"));
            first.info("sa");

            try (RawClient intruder = new RawClient(other(2), first.sess, java.util.UUID.randomUUID()).withExtensions()
                    .open(addr(), 1)) {
                assertEquals(0, intruder.authenticate(chap(Map.of("host-b", KEY_B)), "host-b"), "host-b's own key");
                infoRefused(intruder, "sa");
            }
            assertTrue(log.contains("the path says host id 'host-b', the session's is 'host-a'"), log.text());

            serverAuth.set(new NoneAuthenticator());
            try (RawClient claimer = new RawClient(other(3), first.sess, java.util.UUID.randomUUID()).withExtensions()
                    .open(addr(), 1)) {
                assertEquals(0, claimer.authenticate(new NoneAuthenticator(), "host-a"));
                infoRefused(claimer, "sa");
            }
            assertTrue(log.contains("was proven (chap), this path's is not (none)"), log.text());

            serverAuth.set(serverChap());
            try (RawClient second = new RawClient(other(4), first.sess, java.util.UUID.randomUUID()).withExtensions()
                    .open(addr(), 1)) {
                assertEquals(0, second.authenticate(chap(Map.of("host-a", KEY_A)), "host-a"));
                second.info("sa");
            }
            ServerSession s = session("sa");
            assertEquals("host-a", s.hostId());
            assertTrue(s.hostIdProven());
        }
    }
}
