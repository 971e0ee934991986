package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.rtrs.client.internal.ClientConfig;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ClientSessionConfigTest {
    /** A Config with the annotation defaults, overridden by {@code values}. */
    static ClientSessionComponent.Config config(Map<String, Object> values) {
        return (ClientSessionComponent.Config) Proxy.newProxyInstance(ClientSessionConfigTest.class.getClassLoader(),
                new Class<?>[] {ClientSessionComponent.Config.class}, (p, m, a) -> {
                    if (values.containsKey(m.getName())) {
                        return values.get(m.getName());
                    }
                    return m.getDefaultValue();
                });
    }

    @Test
    void mapsTheKernelKnobs() {
        ClientConfig c = ClientSessionComponent.toConfig(config(Map.of("session_name", "s1",
                "paths", "127.0.0.2@127.0.0.1, 127.0.0.1:4000", "reconnect_delay_sec", 3, "io_timeout_ms", 30000L,
                "host_id", "h1")));
        assertEquals("s1", c.sessionName());
        assertEquals(2, c.paths().size());
        assertEquals(1234, c.paths().get(0).port());
        assertEquals(4000, c.paths().get(1).port());
        assertEquals(3000, c.reconnectDelayMs());
        assertEquals(1000, c.reconnectBackoffMs());
        assertEquals(30000, c.ioTimeoutMs());
        assertEquals("min-inflight", c.mpPolicy());
        assertEquals(-1, c.maxReconnectAttempts());
        assertEquals("h1", c.hostId());
        assertEquals(5000, c.hbIntervalMs());
    }

    /** As shipped, IO waits a minute for a path (every hot swap completes), not EIO at once. */
    @Test
    void ioWaitsAMinuteForAPathByDefault() {
        ClientConfig c = ClientSessionComponent.toConfig(config(Map.of("session_name", "s", "paths", "127.0.0.1")));
        assertEquals(60_000, c.ioTimeoutMs());
        assertEquals(30_000, c.requestTimeoutMs());
    }

    @Test
    void invalidConfigurationFailsFastWithAClearMessage() {
        assertThrows(IllegalArgumentException.class,
                () -> ClientSessionComponent.toConfig(config(Map.of("paths", "127.0.0.1"))), "no name");
        assertThrows(IllegalArgumentException.class,
                () -> ClientSessionComponent.toConfig(config(Map.of("session_name", "s"))), "no path");
        assertThrows(IllegalArgumentException.class, () -> ClientSessionComponent.toConfig(
                config(Map.of("session_name", "s", "paths", "127.0.0.1", "max_reconnect_attempts", -5))));
        assertThrows(IllegalArgumentException.class, () -> ClientSessionComponent.toConfig(
                config(Map.of("session_name", "s", "paths", "nohost@@x"))));
    }
}
