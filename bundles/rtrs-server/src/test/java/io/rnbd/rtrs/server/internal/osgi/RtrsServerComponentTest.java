package io.rnbd.rtrs.server.internal.osgi;

import io.rnbd.rtrs.api.Ranked;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.AuthExchange;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RtrsServerComponentTest {
    static RtrsServerComponent.Config config(Map<String, Object> values) {
        return (RtrsServerComponent.Config) Proxy.newProxyInstance(RtrsServerComponentTest.class.getClassLoader(),
                new Class<?>[] {RtrsServerComponent.Config.class},
                (p, m, a) -> values.containsKey(m.getName()) ? values.get(m.getName()) : m.getDefaultValue());
    }

    @Test
    void invalidConfigurationFailsActivationWithAClearMessage() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RtrsServerComponent(config(Map.of("chunk_size", 10_000))));
        assertTrue(e.getMessage().contains("chunk.size"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RtrsServerComponent(config(Map.of("queue_depth", 0))));
        assertThrows(IllegalArgumentException.class,
                () -> new RtrsServerComponent(config(Map.of("queue_depth", 65535, "chunk_size", 131072))));
    }

    @Test
    void listensOnlyBetweenAddAndRemoveAndLeavesNothingBehind() throws Exception {
        RtrsServerComponent c = new RtrsServerComponent(config(Map.of("port", 0, "queue_depth", 4, "chunk_size", 8192)));
        SoftDevice dev = new SoftDevice("soft-c", InetAddress.getByName("127.0.0.1"));
        try {
            assertEquals("rtrs-server", c.server().clientName());
            c.server().add(dev);
            assertEquals(0, c.server().sessions().size());
            c.server().remove(dev);
        } finally {
            c.deactivate();
            dev.close();
        }
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("rtrs-server-timer")
                && t.isAlive()), "timer thread stopped");
    }

    /**
     * Issue 35 e: a new queue.depth or chunk.size goes to new sessions without a restart (a
     * mapped Linux client keeps its session, which it would otherwise give up for good); any
     * other change rebuilds the server, handing it the sessions' limits.
     */
    @Test
    void aNewQueueDepthAloneKeepsTheServerAnythingElseRebuildsIt() throws Exception {
        RtrsServerComponent c = new RtrsServerComponent(config(Map.of("port", 0, "queue_depth", 4, "chunk_size", 8192)));
        try {
            io.rnbd.rtrs.server.internal.RtrsServer first = c.server();
            c.modified(config(Map.of("port", 0, "queue_depth", 8, "chunk_size", 16384)));
            assertSame(first, c.server(), "queue.depth and chunk.size alone: no restart");
            c.modified(config(Map.of("port", 0, "queue_depth", 8, "chunk_size", 16384, "auth_method", "none")));
            assertSame(first, c.server(), "the authentication method alone: no restart");
            c.modified(config(Map.of("port", 0, "queue_depth", 8, "chunk_size", 16384, "hb_missed_max", 7)));
            assertNotSame(first, c.server(), "another setting rebuilds the server");
            assertThrows(IllegalArgumentException.class,
                    () -> c.modified(config(Map.of("port", 0, "queue_depth", 0))), "refused like at activation");
        } finally {
            c.deactivate();
        }
    }

    @Test
    void rankedPicksTheHighestRankingThenTheOldestService() {
        Ranked<Authenticator> r = new Ranked<>();
        Authenticator a = auth("a");
        Authenticator b = auth("b");
        Authenticator c = auth("c");
        r.put(a, Map.of("service.id", 1L));
        r.put(b, Map.of("service.id", 2L, "service.ranking", 10));
        r.put(c, Map.of("service.id", 3L, "service.ranking", 10));
        assertSame(b, r.best());
        r.remove(b);
        assertSame(c, r.best());
        r.remove(c);
        assertSame(a, r.best());
        r.remove(a);
        assertEquals(null, r.best());
    }

    static Authenticator auth(String name) {
        return new Authenticator() {
            @Override
            public String method() {
                return name;
            }

            @Override
            public AuthExchange initiate(String hostId) {
                throw new UnsupportedOperationException();
            }

            @Override
            public AuthExchange respond() {
                throw new UnsupportedOperationException();
            }
        };
    }
}
