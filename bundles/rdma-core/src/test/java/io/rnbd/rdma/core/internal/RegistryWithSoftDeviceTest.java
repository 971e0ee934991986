package io.rnbd.rdma.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.testkit.ExternalTools;
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The founding lifecycle with a real device: a server-like client listens only from
 * {@code add}, lets go in {@code remove}, and the device removal (unregister, then close)
 * leaves the port free for the next incarnation.
 */
class RegistryWithSoftDeviceTest {
    /** Listens on a fixed port of every device it is given, like rtrs-server. */
    static final class ListeningClient implements IbClient {
        final int port;
        final Map<RdmaDevice, CmListener> listeners = new ConcurrentHashMap<>();
        final Map<RdmaDevice, ProtectionDomain> pds = new ConcurrentHashMap<>();

        ListeningClient(int port) {
            this.port = port;
        }

        @Override
        public String clientName() {
            return "listener";
        }

        @Override
        public void add(RdmaDevice device) {
            try {
                pds.put(device, device.allocPd());
                listeners.put(device, device.listen(new InetSocketAddress(device.addresses().get(0), port),
                        req -> req.reject(Errno.EBUSY)));
            } catch (RdmaException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void remove(RdmaDevice device) {
            listeners.remove(device).close();
            pds.remove(device).close();
        }
    }

    @Test
    void deviceComesAndGoesAndTheClientFollows() throws Exception {
        DeviceRegistry registry = new DeviceRegistry();
        ListeningClient client = new ListeningClient(ExternalTools.freePortOn(InetAddress.getByName("127.0.0.1")));
        registry.addClient(client);
        try (SoftDevice peer = new SoftDevice("peer", InetAddress.getByName("127.0.0.2"))) {
            for (int round = 0; round < 3; round++) {
                SoftDevice dev = new SoftDevice("soft0", InetAddress.getByName("127.0.0.1"));
                registry.addDevice(dev);
                assertEquals(List.of("listener"), registry.devices().get(0).clients());
                InetSocketAddress at = client.listeners.get(dev).localAddress();
                assertEquals(client.port, at.getPort());

                Endpoint ep = new Endpoint("peer");
                peer.connect(at, new QpInit(peer.allocPd(), 4, 4, 1, ep), null, ep);
                assertEquals(Errno.EBUSY, ep.nextEvent(CmEvent.Type.REJECTED).status());

                registry.removeDevice(dev);
                assertTrue(client.listeners.isEmpty(), "client let go in remove");
                dev.close();
                assertTrue(registry.devices().isEmpty());
            }
        }
        registry.removeClient(client);
        assertTrue(client.listeners.isEmpty() && client.pds.isEmpty());
    }
}
