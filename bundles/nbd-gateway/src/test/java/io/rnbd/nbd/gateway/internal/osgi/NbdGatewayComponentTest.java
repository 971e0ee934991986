package io.rnbd.nbd.gateway.internal.osgi;

import static org.junit.jupiter.api.Assertions.*;

import io.rnbd.nbd.client.NbdClient;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.block.FakeBlockDevice;
import io.rnbd.testkit.block.ForwardingBlockDevice;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class NbdGatewayComponentTest {
    private static NbdGatewayComponent.Config config(String address, int port, String unix) {
        return config(Map.of("address", address, "port", port, "unix_socket", unix));
    }

    /** A Config as DS builds it: the given values, every other attribute at its metatype default. */
    static NbdGatewayComponent.Config config(Map<String, Object> values) {
        return (NbdGatewayComponent.Config) Proxy.newProxyInstance(NbdGatewayComponent.Config.class.getClassLoader(),
                new Class<?>[] {NbdGatewayComponent.Config.class}, (proxy, m, args) -> {
                    if (m.getName().equals("annotationType")) {
                        return NbdGatewayComponent.Config.class;
                    }
                    Object v = values.get(m.getName());
                    return v != null ? v : m.getDefaultValue();
                });
    }

    @Test
    void devicesComeAndGoAsExports() throws Exception {
        NbdGatewayComponent gw = new NbdGatewayComponent(config("127.0.0.1", 0, ""));
        try {
            Remote rnbd0 = new Remote("rnbd0", new FakeBlockDevice(1 << 20).limitingEveryRequest());
            Remote rnbd1 = new Remote("rnbd1",
                    new FakeBlockDevice(1 << 20).limitingEveryRequest().withCapabilities(Capabilities.READ_ONLY));
            gw.bindDevice(rnbd0, Map.of(RemoteBlockDevice.PROP_NAME, "rnbd0"));
            gw.bindDevice(rnbd1, Map.of(RemoteBlockDevice.PROP_NAME, "rnbd1"));
            assertEquals(List.of("rnbd0", "rnbd1"), NbdClient.list(gw.tcpAddress()));
            try (NbdClient c0 = NbdClient.connect(gw.tcpAddress(), "rnbd0");
                 NbdClient c1 = NbdClient.connect(gw.tcpAddress(), "rnbd1")) {
                c0.write(0, ByteBuffer.allocate(4096), true).get();
                assertFalse(c1.capabilities().write());
                gw.unbindDevice(rnbd0, Map.of(RemoteBlockDevice.PROP_NAME, "rnbd0"));
                assertEquals(List.of("rnbd1"), NbdClient.list(gw.tcpAddress()));
                assertThrows(ExecutionException.class, () -> {
                    while (true) {
                        c0.read(0, ByteBuffer.allocate(512)).get(5, TimeUnit.SECONDS);
                    }
                });
                c1.read(0, ByteBuffer.allocate(512)).get(5, TimeUnit.SECONDS);
            }
        } finally {
            gw.deactivate();
        }
        assertThrows(ConnectException.class, () -> NbdClient.list(gw.tcpAddress()));
    }

    @Test
    void aListenerBeyondLoopbackWithoutTlsOrWithPskFailsActivationWithTheReason() {
        IllegalArgumentException wide = assertThrows(IllegalArgumentException.class,
                () -> new NbdGatewayComponent(config(Map.of("address", "0.0.0.0", "port", 0))));
        assertTrue(wide.getMessage().contains("beyond loopback") && wide.getMessage().contains("tls=require"),
                wide.getMessage());
        IllegalArgumentException psk = assertThrows(IllegalArgumentException.class,
                () -> new NbdGatewayComponent(config(Map.of("port", 0, "tls", "require", "tls_psk", "/etc/keys.psk"))));
        assertTrue(psk.getMessage().contains("TLS-PSK"), psk.getMessage());
        IllegalArgumentException noCert = assertThrows(IllegalArgumentException.class,
                () -> new NbdGatewayComponent(config(Map.of("port", 0, "tls", "require"))));
        assertTrue(noCert.getMessage().contains("tls.certificates"), noCert.getMessage());
    }

    @Test
    void badConfigurationFailsActivation() {
        assertThrows(IllegalArgumentException.class, () -> new NbdGatewayComponent(config("127.0.0.1", 70000, "")));
        assertThrows(IllegalArgumentException.class, () -> new NbdGatewayComponent(config(" ", 10809, "")));
    }

    @Test
    void adminViewShowsExportsConnectionsAndCounters() throws Exception {
        NbdGatewayComponent gw = new NbdGatewayComponent(config("127.0.0.1", 0, ""));
        try {
            NbdGatewayAdmin.GatewayInfo idle = gw.info();
            assertEquals("127.0.0.1:" + gw.tcpAddress().getPort(), idle.address());
            assertEquals("", idle.unixSocket());
            assertEquals(List.of(), idle.exports());
            assertEquals(0, idle.connectionsOpen());
            Remote rnbd0 = new Remote("rnbd0", new FakeBlockDevice(1 << 20).limitingEveryRequest());
            gw.bindDevice(rnbd0, Map.of(RemoteBlockDevice.PROP_NAME, "rnbd0"));
            try (NbdClient c = NbdClient.connect(gw.tcpAddress(), "rnbd0")) {
                c.write(0, ByteBuffer.allocate(4096), false).get(5, TimeUnit.SECONDS);
                c.read(0, ByteBuffer.allocate(1024)).get(5, TimeUnit.SECONDS);
                // the reply's bytes are counted once its write returned, which may be just after
                // the client read it
                Await.until("the read's bytes counted", () -> gw.info().stats().bytesRead() >= 1024,
                        Duration.ofSeconds(5));
                NbdGatewayAdmin.GatewayInfo busy = gw.info();
                assertEquals(List.of("rnbd0"), busy.exports());
                assertEquals(1, busy.connectionsOpen());
                assertEquals(1, busy.stats().connections());
                assertEquals(2, busy.stats().requests());
                assertEquals(4096, busy.stats().bytesWritten());
                assertEquals(1024, busy.stats().bytesRead());
                assertEquals(0, busy.stats().errors());
            }
        } finally {
            gw.deactivate();
        }
    }

    /** A mapped device as the RNBD client would register it. */
    private static final class Remote extends ForwardingBlockDevice implements RemoteBlockDevice {
        private final String name;

        Remote(String name, BlockDevice dev) {
            super(dev);
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String exportName() {
            return "export-" + name;
        }

        @Override
        public String sessionName() {
            return "sess";
        }

        @Override
        public AccessMode accessMode() {
            return AccessMode.RW;
        }
    }
}
