package io.rnbd.rdma.core.internal;

import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequestHandler;
import io.rnbd.rdma.api.DeviceAttributes;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** Test doubles that record every registry callback and every rule it breaks. */
final class Recorder {
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final Queue<String> log = new ConcurrentLinkedQueue<>();

    final class Device implements RdmaDevice {
        final String name;
        volatile boolean registered;

        Device(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String provider() {
            return "fake";
        }

        @Override
        public String nodeId() {
            return "node-" + name;
        }

        @Override
        public LinkState linkState() {
            return LinkState.ACTIVE;
        }

        @Override
        public java.util.Map<String, Long> counters() {
            java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
            m.put("z_first", 7L);
            m.put("a_second", (long) name.length());
            return m;
        }

        @Override
        public DeviceAttributes attributes() {
            return new DeviceAttributes(1, 1, 1, 1, 1);
        }

        @Override
        public List<InetAddress> addresses() {
            return List.of(InetAddress.getLoopbackAddress());
        }

        @Override
        public ProtectionDomain allocPd() {
            throw new UnsupportedOperationException();
        }

        @Override
        public CmListener listen(InetSocketAddress address, ConnectRequestHandler handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public QueuePair connect(InetSocketAddress destination, QpInit init, byte[] privateData,
                                 CmEventHandler events) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    final class Client implements IbClient {
        final String name;
        final Set<RdmaDevice> held = ConcurrentHashMap.newKeySet();
        final Map<String, AtomicInteger> adds = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> removes = new ConcurrentHashMap<>();
        private final AtomicInteger inCall = new AtomicInteger();
        volatile boolean active;
        volatile String throwOnAdd;

        Client(String name) {
            this.name = name;
        }

        @Override
        public String clientName() {
            return name;
        }

        @Override
        public void add(RdmaDevice device) {
            enter("add", device);
            try {
                adds.computeIfAbsent(device.name(), k -> new AtomicInteger()).incrementAndGet();
                if (!held.add(device)) {
                    violations.add(name + ": add(" + device + ") twice");
                }
                if (device.name().equals(throwOnAdd)) {
                    held.remove(device);
                    throw new IllegalStateException("boom");
                }
            } finally {
                inCall.decrementAndGet();
            }
        }

        @Override
        public void remove(RdmaDevice device) {
            enter("remove", device);
            try {
                removes.computeIfAbsent(device.name(), k -> new AtomicInteger()).incrementAndGet();
                if (!held.remove(device)) {
                    violations.add(name + ": remove(" + device + ") without add");
                }
            } finally {
                inCall.decrementAndGet();
            }
        }

        private void enter(String what, RdmaDevice device) {
            log.add(name + "." + what + "(" + device + ")");
            if (inCall.incrementAndGet() != 1) {
                violations.add(name + ": concurrent calls");
            }
            if (!active) {
                violations.add(name + ": " + what + "(" + device + ") while not active");
            }
            if (!((Device) device).registered) {
                violations.add(name + ": " + what + "(" + device + ") for an unregistered device");
            }
        }

        int adds(String device) {
            AtomicInteger n = adds.get(device);
            return n == null ? 0 : n.get();
        }

        int removes(String device) {
            AtomicInteger n = removes.get(device);
            return n == null ? 0 : n.get();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // registry operations wrapped with the lifecycle flags the doubles check against

    void register(DeviceRegistry r, Device d) {
        d.registered = true;
        r.addDevice(d);
    }

    void unregister(DeviceRegistry r, Device d) {
        r.removeDevice(d);
        d.registered = false;
    }

    void register(DeviceRegistry r, Client c) {
        c.active = true;
        r.addClient(c);
    }

    void unregister(DeviceRegistry r, Client c) {
        r.removeClient(c);
        c.active = false;
    }
}
