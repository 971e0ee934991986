package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile clients (raw verbs, {@link RawClient}) that start a path and never finish its
 * handshake: the server closes such a path at {@code handshake.timeout.ms} (on fake time),
 * and refuses a new path from a source that already has {@code max.half.open.per.source}
 * in their handshake; honest clients are not affected.
 */
class HandshakeDeadlineTest {
    static final long TIMEOUT_MS = 10_000;
    final FakeScheduler fake = new FakeScheduler();
    final List<SoftDevice> devices = new ArrayList<>();
    final List<RawClient> clients = new ArrayList<>();
    SoftDevice dev;
    RtrsServer server;

    void start(Authenticator auth, int perSource) throws Exception {
        dev = device(1);
        // heartbeats far apart: fake hours pass in these tests
        ServerConfig cfg = new ServerConfig(0, 8192, 4, true, 36_000_000, 5).withHandshake(TIMEOUT_MS, perSource);
        server = new RtrsServer(cfg, () -> r -> r.complete(0), () -> auth, fake, fake.nanoSource());
        server.add(dev);
    }

    SoftDevice device(int lastOctet) throws Exception {
        SoftDevice d = new SoftDevice("soft-hd" + lastOctet, InetAddress.getByName("127.0.0." + lastOctet));
        devices.add(d);
        return d;
    }

    RawClient client(SoftDevice from) throws Exception {
        RawClient c = new RawClient(from);
        clients.add(c);
        return c;
    }

    @AfterEach
    void stop() {
        clients.forEach(RawClient::close);
        if (server != null) {
            server.close();
        }
        fake.runDue();
        devices.forEach(SoftDevice::close);
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    int paths() {
        return server.sessions().stream().mapToInt(s -> s.paths().size()).sum();
    }

    void assertClosedByServer(RawClient c) throws Exception {
        assertEquals(CmEvent.Type.DISCONNECTED, c.cons[0].event().type(), "the server closed the path");
    }

    @Test
    void aPathThatNeverSendsInfoReqIsClosedAtTheDeadline() throws Exception {
        start(null, 16);
        RawClient c = client(device(2)).open(addr(), 2);
        assertEquals(1, paths());
        fake.advance(Duration.ofMillis(TIMEOUT_MS - 100));
        assertEquals(1, paths(), "still within the deadline");
        try (LogCapture log = LogCapture.start()) {
            fake.advance(Duration.ofMillis(200));
            assertClosedByServer(c);
            assertTrue(log.contains("handshake not finished within 10000 ms (handshake.timeout.ms): no INFO_REQ"),
                    log.text());
        }
        fake.runDue();
        assertEquals(0, paths(), "the path and its session are gone");
        assertEquals(1L, server.handshakeCounters()[1]);
    }

    @Test
    void aPathWhoseConnectionsNeverAllArriveIsClosedAtTheDeadline() throws Exception {
        start(null, 16);
        RawClient c = client(device(2));
        c.cons = new RawClient.Con[] {c.new Con(addr(), c.conReq(0, 3, true))};
        assertEquals(CmEvent.Type.ESTABLISHED, c.cons[0].event().type());
        try (LogCapture log = LogCapture.start()) {
            fake.advance(Duration.ofMillis(TIMEOUT_MS));
            assertClosedByServer(c);
            assertTrue(log.contains("1 of 3 connections up"), log.text());
        }
    }

    /** The client sends NEGOTIATE, gets the CHALLENGE, and answers nothing. */
    @Test
    void anAuthenticationLeftUnfinishedIsClosedAtTheDeadline() throws Exception {
        start(IdentityTest.chap(Map.of("host-a", IdentityTest.KEY_A)), 16);
        RawClient c = client(device(2)).withExtensions().open(addr(), 1);
        byte[] negotiate = IdentityTest.chap(Map.of("host-a", IdentityTest.KEY_A)).initiate("host-a")
                .step(new byte[0]);
        AuthMsg m = AuthMsg.step("chap", negotiate, false);
        c.cons[0].send(m.size(), m::encode);
        AuthMsg challenge = AuthMsg.decode(c.cons[0].data(c.cons[0].recv()));
        assertEquals(0, challenge.status());
        try (LogCapture log = LogCapture.start()) {
            fake.advance(Duration.ofMillis(TIMEOUT_MS));
            assertClosedByServer(c);
            assertTrue(log.contains("authentication (chap) unfinished"), log.text());
        }
    }

    @Test
    void aPathThatFinishesItsHandshakeIsNotTouchedByTheDeadline() throws Exception {
        start(null, 16);
        RawClient c = client(device(2)).connect(addr(), 2, "honest");
        fake.advance(Duration.ofHours(1));
        assertEquals(1, server.session("honest").orElseThrow().pathCount());
        assertEquals(0L, server.handshakeCounters()[1]);
        assertEquals(4, c.info.chunks(4, 8192).size());
    }

    /**
     * Four paths from one source in their handshake fill its share: a fifth new path from there
     * is refused with EAGAIN (retried by clients, not final) while another source gets in; a
     * slot comes back when one of the four finishes its handshake.
     */
    @Test
    void oneSourceCannotHoldMoreThanItsShareOfHalfOpenPaths() throws Exception {
        start(null, 4);
        SoftDevice flood = device(2);
        List<RawClient> held = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            held.add(client(flood).open(addr(), 1));
        }
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < 3; i++) {
                ConRsp refused = client(flood).hello(addr(), 1);
                assertEquals(Errno.EAGAIN, refused.errno());
                assertTrue((refused.flags() & ConRsp.DNR_F) == 0, "a refusal to retry later, not final");
            }
            assertTrue(log.contains("refusing a new path from 127.0.0.2: 4 paths from there are already in their "
                    + "handshake"), log.text());
        }
        assertEquals(3L, server.handshakeCounters()[0]);
        assertEquals(0, client(device(3)).hello(addr(), 1).errno(), "another source is not affected");

        held.get(0).info("done");
        assertEquals(0, client(flood).hello(addr(), 1).errno(), "a finished handshake frees its slot");
    }
}
