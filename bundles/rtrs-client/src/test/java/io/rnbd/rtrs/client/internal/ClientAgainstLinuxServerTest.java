package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.core.internal.DeviceRegistry;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.proto.ConReq;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client against a server that speaks only Linux's RTRS ({@link LinuxStyleServer}):
 * what it connects with, that IO works with and without always_invalidate and with one
 * descriptor for all chunks, that refusals carry the server's errno, and that failover
 * resubmits at once, since such a server cannot fence. The Linux server in the rxe guest
 * is the judge; this keeps the same expectations on the host.
 */
class ClientAgainstLinuxServerTest {
    private SoftDevice dev;
    private final DeviceRegistry registry = new DeviceRegistry();
    private final DeviceSet devices = new DeviceSet();
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    private final List<AutoCloseable> closers = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dev = new SoftDevice("soft-lx", InetAddress.getByName("127.0.0.1"));
        registry.addDevice(dev);
        registry.addClient(devices);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        registry.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    private LinuxStyleServer server(boolean alwaysInvalidate) throws Exception {
        LinuxStyleServer s = new LinuxStyleServer(dev, alwaysInvalidate);
        closers.add(s);
        return s;
    }

    private ClientSession open(ClientConfig cfg) {
        ClientSession s = new ClientSession(cfg, devices, () -> null, timer, System::nanoTime);
        closers.add(s::close);
        return s;
    }

    private ClientSession open(ClientConfig cfg, FakeScheduler clock) {
        ClientSession s = new ClientSession(cfg, devices, () -> null, clock, clock.nanoSource());
        closers.add(s::close);
        return s;
    }

    private static ClientConfig config(String name, PathAddress... paths) {
        return ClientConfig.of(name, List.of(paths)).withTimings(50, 0, 0, 5000, 5).withCons(2);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void verifiedIoWithAndWithoutAlwaysInvalidate(boolean alwaysInvalidate) throws Exception {
        LinuxStyleServer srv = server(alwaysInvalidate);
        ClientSession s = open(config("lx", srv.path()));
        Await.until("connected", () -> s.state() == SessionState.CONNECTED);
        assertEquals(LinuxStyleServer.QD, s.queueDepth());
        Random rnd = new Random(7);
        byte[][] blocks = new byte[40][];
        List<CompletableFuture<Integer>> writes = new ArrayList<>();
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = new byte[4096 + i * 64];
            rnd.nextBytes(blocks[i]);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            s.write(MemoryOps.hdr(i * 16384L), ByteBuffer.wrap(blocks[i]), f::complete);
            writes.add(f);
        }
        for (CompletableFuture<Integer> f : writes) {
            assertEquals(0, f.get(10, TimeUnit.SECONDS));
        }
        for (int i = 0; i < blocks.length; i++) {
            ByteBuffer dst = ByteBuffer.allocate(blocks[i].length);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            s.read(MemoryOps.hdr(i * 16384L), dst, f::complete);
            assertEquals(0, f.get(10, TimeUnit.SECONDS));
            assertArrayEquals(blocks[i], dst.array(), "block " + i);
        }
        assertEquals(0, srv.foreignSends.get(), "nothing but INFO_REQ was SENT: no AUTH, no FENCE");
    }

    /**
     * Every connection's CON_REQ: the session's uuid at offset 28, the path's at 12, one
     * cid_num, the extension bit; and only the first path may create the session: the
     * second connects once the first's connection 0 was accepted, without first_conn
     * (Linux's for_new_clt).
     */
    @Test
    void conReqsCarryTheUuidsAsLinuxAndOnlyTheFirstPathCreatesTheSession() throws Exception {
        LinuxStyleServer srv = server(false);
        PathAddress a = srv.path();
        PathAddress b = new PathAddress(null, a.dst(), a.port());
        ClientSession s = open(config("lx2", a, b));
        Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        List<ConReq> reqs = srv.conReqs;
        assertEquals(6, reqs.size(), "two paths of three connections");
        assertEquals(1, reqs.stream().map(ConReq::sessionUuid).distinct().count());
        List<UUID> paths = reqs.stream().map(ConReq::pathUuid).distinct().collect(Collectors.toList());
        assertEquals(2, paths.size());
        UUID first = reqs.get(0).pathUuid();
        int firstCon0 = -1;
        int otherStart = -1;
        for (int i = 0; i < reqs.size(); i++) {
            ConReq r = reqs.get(i);
            if (r.pathUuid().equals(first) && r.cid() == 0) {
                firstCon0 = i;
            } else if (!r.pathUuid().equals(first) && otherStart < 0) {
                otherStart = i;
            }
        }
        assertTrue(firstCon0 >= 0 && otherStart > firstCon0,
                "the second path connects only after the first path's connection 0: " + reqs);
        for (ConReq r : reqs) {
            assertEquals(3, r.cidNum());
            assertTrue(r.extensions());
            assertEquals(r.pathUuid().equals(first), r.firstConn(), "first_conn only for the creating path");
        }
    }

    /**
     * rtrs-clt.c's init_conns: connection N+1's connect only once N is established, so Linux's
     * server never sees two connect requests of one path mid-handshake. The server here keeps
     * connection 0 waiting: a client that connected them all at once would have sent the others
     * by then.
     */
    @Test
    void theConnectionsOfAPathConnectOneAfterTheOther() throws Exception {
        LinuxStyleServer srv = server(false);
        srv.parkFirstCon = true;
        ClientSession s = open(config("lxseq", srv.path()));
        Await.until("connection 0's connect request parked", () -> srv.parkedCount() >= 1);
        // read under the session lock, which the client holds while it connects: a client that does
        // not wait has connected every connection by then
        boolean[] laterConnected = new boolean[1];
        s.lock.locked(() -> {
            ClientCon[] cons = s.paths.get(0).cons;
            for (int cid = 1; cid < cons.length; cid++) {
                laterConnected[0] |= cons[cid].qp != null;
            }
        });
        assertFalse(laterConnected[0], "a later connection connected while connection 0 waits for its answer");
        srv.parkFirstCon = false;
        srv.releaseParked();
        Await.until("connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        UUID path = srv.conReqs.get(0).pathUuid();
        List<String> log = srv.cmLog;
        assertEquals(3, srv.conReqs.size(), "three connections: " + log);
        for (int cid = 1; cid < 3; cid++) {
            int req = log.indexOf("req " + path + "/" + cid);
            int prevAccepted = log.indexOf("accept " + path + "/" + (cid - 1));
            assertTrue(prevAccepted >= 0 && req > prevAccepted,
                    "connection " + cid + " connects only after " + (cid - 1) + " was accepted: " + log);
        }
    }

    /**
     * A server that dropped every path (a restart: rmmod and modprobe of rtrs-server) may have
     * forgotten the session, and each path of a session that was connected asks to create it
     * (for_new_clt). Two such creating connects at the same moment make two sessions of one on
     * Linux's server, and 7.3's oopses over them (docs/interop.md, run 13). So the paths come
     * back one at a time until the server knows the session again: here connection 0 of the
     * first path back waits for its answer, and the other path sends nothing meanwhile.
     */
    @Test
    void afterLosingEveryPathTheSessionIsCreatedAgainByOnePathAtATime() throws Exception {
        LinuxStyleServer srv = server(false);
        FakeScheduler clock = new FakeScheduler();
        ClientSession s = twoPathsOnAFakeClock(srv, "lxre", clock);
        int before = srv.conReqs.size();
        int logBefore = srv.cmLog.size();
        UUID creator = bothTryAgainOneParked(srv, s, clock);
        clock.advanceMillis(FirstConn.HOLD_MS - 1500);
        List<ConReq> during = List.copyOf(srv.conReqs.subList(before, srv.conReqs.size()));
        assertEquals(1, during.size(), "one connect request while the first path back waits for its answer: " + during);
        assertTrue(during.get(0).firstConn(), "the path back asks to create the session");
        srv.parkFirstCon = false;
        srv.releaseParked();
        Await.until("both back", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        List<String> log = List.copyOf(srv.cmLog.subList(logBefore, srv.cmLog.size()));
        int accepted = log.indexOf("accept " + creator + "/0");
        int otherFirst = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith("req ") && !log.get(i).startsWith("req " + creator)) {
                otherFirst = i;
                break;
            }
        }
        assertTrue(accepted >= 0 && otherFirst > accepted,
                "the other path connects only once the first path's connection 0 was accepted: " + log);
        assertEquals(0, write(s, 0), "IO goes on over the session the server made once");
    }

    /**
     * The first path back may be one that cannot reach the server (its link is down): it holds
     * the others off for {@link FirstConn#HOLD_MS}, not for its whole 30 s connect timeout. A
     * server that has not answered in that time is not in the middle of making the session.
     */
    @Test
    void aCreatingConnectWithNoAnswerHoldsTheOtherPathsOffOnlyForAWhile() throws Exception {
        LinuxStyleServer srv = server(false);
        FakeScheduler clock = new FakeScheduler();
        ClientSession s = twoPathsOnAFakeClock(srv, "lxhold", clock);
        int before = srv.conReqs.size();
        UUID creator = bothTryAgainOneParked(srv, s, clock);
        clock.advanceMillis(FirstConn.HOLD_MS - 1500);
        assertEquals(1, srv.conReqs.size() - before, "still held off");
        clock.advanceMillis(1500);
        Await.until("the other path's connect request too", () -> srv.parkedCount() == 2);
        List<ConReq> during = List.copyOf(srv.conReqs.subList(before, srv.conReqs.size()));
        assertEquals(2, during.stream().map(ConReq::pathUuid).distinct().count(), "both paths: " + during);
        assertTrue(during.stream().allMatch(ConReq::firstConn));
        srv.parkFirstCon = false;
        srv.releaseParked();
        Await.until("both back", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        assertTrue(during.stream().anyMatch(r -> r.pathUuid().equals(creator) && r.cid() == 0));
    }

    /** A session of two paths to {@code srv}, both connected, its timers on {@code clock}. */
    private ClientSession twoPathsOnAFakeClock(LinuxStyleServer srv, String name, FakeScheduler clock) {
        PathAddress a = srv.path();
        ClientSession s = open(config(name, a, new PathAddress(null, a.dst(), a.port())), clock);
        Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        return s;
    }

    /**
     * Drops every path with connection 0's connect requests parked, and moves the clock on until
     * both paths' reconnect timers have fired: both CONNECTING again (the timer's section moves a
     * path to CONNECTING and connects it, under the lock this reads under) and one request parked.
     * Returns the path whose request it is.
     */
    private static UUID bothTryAgainOneParked(LinuxStyleServer srv, ClientSession s, FakeScheduler clock) {
        int before = srv.conReqs.size();
        srv.parkFirstCon = true;
        srv.disconnectAll();
        Await.until("both paths lost", () -> s.pathInfo().stream().noneMatch(p -> p.state() == PathState.CONNECTED));
        Await.until("both paths trying again, one connect request parked", () -> {
            clock.advanceMillis(20);
            boolean[] trying = {false};
            s.lock.locked(() -> trying[0] = s.paths.stream().allMatch(p -> p.state() == PathState.CONNECTING));
            return trying[0] && srv.parkedCount() >= 1;
        });
        assertEquals(1, srv.parkedCount());
        return srv.conReqs.get(before).pathUuid();
    }

    /** A path whose server refuses cannot block the others: once the creator failed, the next one creates. */
    @Test
    void whenTheFirstPathFailsTheNextOneCreatesTheSession() throws Exception {
        LinuxStyleServer srv = server(false);
        PathAddress dead = new PathAddress(null, srv.address().getAddress(), SoftFixture.freePort());
        ClientSession s = open(config("lx3", dead, srv.path()));
        Await.until("second path connected", () -> s.state() == SessionState.CONNECTED);
        assertTrue(srv.conReqs.stream().allMatch(ConReq::firstConn));
    }

    /** rtrs_rdma_conn_rejected: the reject's CON_RSP errno is what the path reports. */
    @Test
    void rejectCarriesTheServersErrno() throws Exception {
        LinuxStyleServer srv = server(false);
        srv.rejectWith = Errno.EBUSY;
        ClientSession s = open(config("lx4", srv.path()));
        Await.until("refused", () -> s.pathInfo().get(0).lastError() == Errno.EBUSY);
        assertFalse(s.state() == SessionState.CONNECTED);
        srv.rejectWith = 0;
        Await.until("reconnected once the server lets it", () -> s.state() == SessionState.CONNECTED);
    }

    /** fail_all_outstanding_reqs: with a server that cannot fence, a dead path's requests go elsewhere at once. */
    private static int write(ClientSession s, long at) throws Exception {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        s.write(MemoryOps.hdr(at), ByteBuffer.wrap(new byte[4096]), f::complete);
        return f.get(10, TimeUnit.SECONDS);
    }

    /**
     * Issue 35 e: the server comes back with another queue depth (Linux's rtrs-srv reloaded with
     * another sess_queue_depth, the appliance's queue.depth changed). Linux's client stops
     * reconnecting for good ("queue depth changed", until a manual reconnect); ours adopts the
     * new depth as soon as nothing uses the old, and until then the path that sees it tries
     * again, while the other path keeps the session going.
     */
    @Test
    void aServerBackWithAnotherQueueDepthIsAdoptedOnceNothingUsesTheOld() throws Exception {
        LinuxStyleServer srv = server(false);
        PathAddress a = srv.path();
        ClientSession s = open(config("lxqd", a));
        Await.until("connected", () -> s.state() == SessionState.CONNECTED);
        assertEquals(8, s.queueDepth());
        assertEquals(0, write(s, 0));

        srv.qd = 4;
        srv.disconnectAll();
        Await.until("reconnected with the new depth", () -> s.state() == SessionState.CONNECTED
                && s.queueDepth() == 4);
        assertEquals(0, write(s, 4096), "IO goes on at the new depth");
        assertTrue(s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
    }

    @Test
    void aPathSeeingAnotherDepthWhileTheOtherPathUsesTheOldRetriesUntilItCanAdopt() throws Exception {
        LinuxStyleServer srv = server(false);
        PathAddress a = srv.path();
        ClientSession s = open(config("lxqd2", a, new PathAddress(null, a.dst(), a.port())));
        Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        srv.qd = 2;
        UUID first = srv.conReqs.get(0).pathUuid();
        int conReqsBefore = srv.conReqs.size();
        srv.disconnectPath(first);
        // the cut path comes back to a depth the other path does not use: refused here, tried again
        Await.until("it tried at least twice", () -> srv.conReqs.stream().skip(conReqsBefore)
                .filter(c -> c.pathUuid().equals(first) && c.cid() == 0).count() >= 2);
        assertEquals(8, s.queueDepth());
        assertEquals(SessionState.CONNECTED, s.state());
        assertEquals(0, write(s, 0), "the other path carries the IO meanwhile");
        assertTrue(s.pathInfo().stream().anyMatch(p -> p.state() != PathState.CONNECTED));
        // the other path goes too: nothing uses depth 8 any more, the first back adopts 2
        srv.disconnectAll();
        Await.until("both back at depth 2", () -> s.queueDepth() == 2
                && s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        assertEquals(0, write(s, 8192));
    }

    @Test
    void failoverWithoutFencingResubmitsAtOnce() throws Exception {
        LinuxStyleServer srv = server(true);
        PathAddress a = srv.path();
        ClientSession s = open(config("lx5", a, new PathAddress(null, a.dst(), a.port())));
        Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
        srv.ops.hold = r -> true;
        List<CompletableFuture<Integer>> writes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            CompletableFuture<Integer> f = new CompletableFuture<>();
            s.write(MemoryOps.hdr(i * 4096L), ByteBuffer.wrap(new byte[4096]), f::complete);
            writes.add(f);
        }
        Await.until("all held", () -> srv.ops.held.size() == 6);
        srv.ops.hold = r -> false;
        UUID victim = srv.conReqs.get(0).pathUuid();
        List<RtrsServerRequest> lost = srv.ops.held.stream()
                .filter(r -> ((LinuxStyleServer.Request) r).path().equals(victim)).toList();
        assertFalse(lost.isEmpty(), "the path to cut carries some of the writes");
        assertTrue(lost.size() < 6, "the other path carries some of the writes");
        srv.ops.held.removeAll(lost); // the server loses them with the path: never written, never answered
        srv.disconnectPath(victim);
        Await.until("the cut path is seen", () -> s.pathInfo().stream().anyMatch(p -> p.state() != PathState.CONNECTED));
        srv.ops.releaseHeld(); // the other path's writes, answered while the lost ones are resent
        for (CompletableFuture<Integer> f : writes) {
            assertEquals(0, f.get(10, TimeUnit.SECONDS));
        }
        synchronized (srv.ops) {
            assertEquals(java.util.Set.of(0L, 4096L, 8192L, 12288L, 16384L, 20480L),
                    srv.ops.landed.stream().map(l -> l[0]).collect(Collectors.toSet()),
                    "every write landed, the lost ones through the other path");
        }
        assertEquals(0, srv.foreignSends.get(), "no FENCE was sent to a server without extensions");
    }
}
