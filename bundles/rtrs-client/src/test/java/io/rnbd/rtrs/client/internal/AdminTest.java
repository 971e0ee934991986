package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.PathView;
import io.rnbd.rtrs.api.Ranked;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The admin interface the console commands use, on a live session over rdma-soft. */
class AdminTest {
    static final class CountingPolicy implements MultipathPolicy {
        final String name;
        final AtomicInteger calls = new AtomicInteger();

        CountingPolicy(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public PathView select(List<? extends PathView> candidates, long sequence) {
            calls.incrementAndGet();
            return candidates.get(candidates.size() - 1);
        }
    }

    static void write(RtrsClient c, ClientSession s) throws Exception {
        CompletableFuture<Integer> w = new CompletableFuture<>();
        s.write(MemoryOps.hdr(0), ByteBuffer.allocate(1024), w::complete);
        assertEquals(0, w.get(10, TimeUnit.SECONDS));
    }

    @Test
    void pathsPoliciesAndStatsAtRuntime() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true));
             RtrsClient client = new RtrsClient(f.timer, System::nanoTime)) {
            client.devices().add(f.dev1);
            client.devices().add(f.dev2);
            CountingPolicy minInflight = new CountingPolicy(MultipathPolicy.MIN_INFLIGHT);
            CountingPolicy minLatency = new CountingPolicy(MultipathPolicy.MIN_LATENCY);
            client.policies(List.of(minLatency, minInflight));
            ClientSession s = client.open(f.config("adm", f.path(f.dev1)));
            List<SessionState> seen = new CopyOnWriteArrayList<>();
            s.addListener((sess, st, err) -> seen.add(st));
            // open() already connects: CONNECTED may come before the listener is there
            SessionState atListen = s.state();
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            assertEquals(MultipathPolicy.MIN_INFLIGHT, s.activePolicy(), "configured policy wins over a higher-ranked one");
            write(client, s);
            assertEquals(1, minInflight.calls.get());

            String p2 = f.path(f.dev2).name();
            client.addPath("adm", f.path(f.dev2).src().getHostAddress() + "@" + f.path(f.dev2).dst().getHostAddress()
                    + ":" + f.path(f.dev2).port());
            Await.until("path 2", () -> client.session("adm").orElseThrow().paths().stream()
                    .anyMatch(p -> p.name().equals(p2) && p.state() == PathState.CONNECTED));
            assertThrows(IllegalArgumentException.class, () -> client.addPath("adm", p2.replace("*", "")));

            client.policies(List.of(minLatency)); // min-inflight bundle goes away
            assertEquals(MultipathPolicy.MIN_LATENCY, s.activePolicy(), "next-ranked policy");
            client.policies(List.of());
            assertEquals(MultipathPolicy.ROUND_ROBIN, s.activePolicy(), "built-in floor");
            client.setMpPolicy("adm", MultipathPolicy.MIN_LATENCY);
            client.policies(List.of(minInflight, minLatency));
            assertEquals(MultipathPolicy.MIN_LATENCY, s.activePolicy());
            assertThrows(IllegalArgumentException.class, () -> client.setMpPolicy("adm", "fastest"));

            client.disconnectPath("adm", p2);
            Await.until("closed", () -> client.session("adm").orElseThrow().paths().get(1).state() == PathState.CLOSED);
            write(client, s);
            client.reconnectPath("adm", p2);
            Await.until("back", () -> client.session("adm").orElseThrow().paths().get(1).state() == PathState.CONNECTED);
            write(client, s);

            client.setMaxReconnectAttempts("adm", 7);
            RtrsClientSessionInfo info = client.session("adm").orElseThrow();
            assertEquals(7, info.maxReconnectAttempts());
            assertEquals(64, info.queueDepth());
            long writes = info.paths().stream().mapToLong(p -> p.stats().io().writes()).sum();
            assertEquals(3, writes);
            assertEquals(3, info.paths().stream().mapToLong(p -> p.stats().ioLatencyHistogram().count()).sum());
            client.resetStats("adm");
            assertEquals(0, client.session("adm").orElseThrow().paths().stream()
                    .mapToLong(p -> p.stats().io().writes()).sum());
            assertEquals(0, client.session("adm").orElseThrow().paths().stream()
                    .mapToLong(p -> p.stats().ioLatencyHistogram().count()).sum());

            client.removePath("adm", p2);
            assertEquals(1, client.session("adm").orElseThrow().paths().size());
            write(client, s);
            assertThrows(IllegalArgumentException.class, () -> client.removePath("adm", p2));
            assertThrows(IllegalArgumentException.class, () -> client.resetStats("nope"));

            client.close(s);
            assertEquals(SessionState.CLOSED, s.state());
            Await.until("listener saw close", () -> seen.contains(SessionState.CLOSED));
            assertTrue(atListen == SessionState.CONNECTED || seen.contains(SessionState.CONNECTED));
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(1024), w::complete);
            assertEquals(io.rnbd.common.Errno.ESHUTDOWN, w.get(5, TimeUnit.SECONDS));
            Await.until("server let go", () -> f.server.sessions().isEmpty());
        }
    }

    /**
     * Issue 34: a policy bundle of the user's own, known by the name its service announces
     * (rtrs.mp.policy), is taken by setMpPolicy, routes the session's IO, is listed with its
     * bundle and the sessions using it; when it goes, the session falls back and a request to
     * choose it again is refused, naming what is known.
     */
    @Test
    void aThirdPartyPolicyIsKnownByItsAnnouncedName() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true));
             RtrsClient client = new RtrsClient(f.timer, System::nanoTime)) {
            client.devices().add(f.dev1);
            CountingPolicy minInflight = new CountingPolicy(MultipathPolicy.MIN_INFLIGHT);
            CountingPolicy mine = new CountingPolicy("FirstPathPolicy"); // its own name() is not what it announces
            Ranked<MultipathPolicy> ranked = new Ranked<>();
            ranked.put(minInflight, Map.of("service.id", 10L), new Provider("min-inflight", "rtrs-mp-min-inflight",
                    "0.1.0.SNAPSHOT", 50, 0));
            ranked.put(mine, Map.of("service.id", 11L), new Provider("first-path", "org.example.rnbd.mp.firstpath",
                    "1.0.0", 90, 0));
            client.policyServices(ranked.entries());
            ClientSession s = client.open(f.config("own", f.path(f.dev1)));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);

            client.setMpPolicy("own", "first-path");
            assertEquals("first-path", s.activePolicy());
            write(client, s);
            assertEquals(1, mine.calls.get(), "the session routes by it");
            assertEquals(List.of(new Provider("min-inflight", "rtrs-mp-min-inflight", "0.1.0.SNAPSHOT", 50, 0),
                    new Provider("first-path", "org.example.rnbd.mp.firstpath", "1.0.0", 90, 0, List.of("own"))),
                    client.mpPolicies());

            ranked.remove(mine); // the jar is deleted from deploy/
            client.policyServices(ranked.entries());
            assertEquals(MultipathPolicy.MIN_INFLIGHT, s.activePolicy(), "falls back to the best-ranked present");
            assertEquals("first-path", client.session("own").orElseThrow().mpPolicy(), "and says what it asked for");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> client.setMpPolicy("own", "first-path"));
            assertEquals("unknown multipath policy 'first-path' (min-inflight, round-robin, min-latency)", e.getMessage());
            write(client, s);
        }
    }
}
