package io.rnbd.rdma.core.internal;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaDeviceInfo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The ib_core analogue: hands every device to every IB client, exactly once, and takes it
 * back exactly once, whatever order devices and clients come and go in.
 *
 * <p>One lock serialises membership changes together with the {@code add}/{@code remove}
 * calls they cause (as ib_core's client and device rwsems do). That makes every
 * guarantee hold by construction: calls to one client never overlap, a removal has
 * finished calling {@code remove} when {@link #removeDevice}/{@link #removeClient} returns,
 * and a device re-registered right after its removal cannot be added before the previous
 * pair was removed. Clients therefore must not block in {@code add}/{@code remove} on work
 * that itself needs the registry.
 */
public final class DeviceRegistry implements RdmaAdmin {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceRegistry.class);

    private final ReentrantLock lock = new ReentrantLock();
    /** Device → clients it is added to (insertion order = add order). */
    private final Map<RdmaDevice, Set<IbClient>> devices = new IdentityHashMap<>();
    private final Map<IbClient, Boolean> clients = new IdentityHashMap<>();
    private final List<IbClient> clientOrder = new ArrayList<>();
    private final List<RdmaDevice> deviceOrder = new ArrayList<>();
    private boolean closed;
    private volatile Map<RdmaDevice, List<String>> view = Map.of();

    /** A device appeared: every registered client gets {@code add}. Repeated calls are ignored. */
    public void addDevice(RdmaDevice device) {
        lock.lock();
        try {
            if (closed || devices.containsKey(device)) {
                return;
            }
            devices.put(device, identitySet());
            deviceOrder.add(device);
            LOG.info("RDMA device {} ({}) registered", device.name(), device.provider());
            for (IbClient c : List.copyOf(clientOrder)) {
                add(c, device);
            }
        } finally {
            publishView();
            lock.unlock();
        }
    }

    /** A device is going: every client it was added to gets {@code remove} before this returns. */
    public void removeDevice(RdmaDevice device) {
        lock.lock();
        try {
            Set<IbClient> added = devices.remove(device);
            if (added == null) {
                return;
            }
            deviceOrder.remove(device);
            List<IbClient> reverse = new ArrayList<>(added);
            Collections.reverse(reverse);
            for (IbClient c : reverse) {
                remove(c, device);
            }
            LOG.info("RDMA device {} unregistered", device.name());
        } finally {
            publishView();
            lock.unlock();
        }
    }

    /** A client appeared: it gets {@code add} for every existing device. */
    public void addClient(IbClient client) {
        lock.lock();
        try {
            if (closed || clients.containsKey(client)) {
                return;
            }
            clients.put(client, Boolean.TRUE);
            clientOrder.add(client);
            for (RdmaDevice d : List.copyOf(deviceOrder)) {
                add(client, d);
            }
        } finally {
            publishView();
            lock.unlock();
        }
    }

    /** A client is going: it gets {@code remove} for every device it holds before this returns. */
    public void removeClient(IbClient client) {
        lock.lock();
        try {
            if (clients.remove(client) == null) {
                return;
            }
            clientOrder.remove(client);
            List<RdmaDevice> reverse = new ArrayList<>(deviceOrder);
            Collections.reverse(reverse);
            for (RdmaDevice d : reverse) {
                if (devices.get(d).remove(client)) {
                    call(client, d, false);
                }
            }
        } finally {
            publishView();
            lock.unlock();
        }
    }

    /** Take every device from every client (registry going away); later calls are ignored. */
    public void close() {
        lock.lock();
        try {
            for (IbClient c : List.copyOf(clientOrder)) {
                removeClient(c);
            }
            devices.clear();
            deviceOrder.clear();
            closed = true;
        } finally {
            publishView();
            lock.unlock();
        }
    }

    private void add(IbClient client, RdmaDevice device) {
        if (!clients.containsKey(client) || !devices.containsKey(device)) {
            return;
        }
        if (!call(client, device, true)) {
            return;
        }
        Set<IbClient> added = devices.get(device);
        if (added != null && clients.containsKey(client)) {
            added.add(client);
        } else {
            // the client or device was removed re-entrantly from inside add: balance it now
            call(client, device, false);
        }
    }

    private void remove(IbClient client, RdmaDevice device) {
        call(client, device, false);
    }

    /** One isolated callback: a throwing client is logged and others proceed. */
    private static boolean call(IbClient client, RdmaDevice device, boolean add) {
        String who = safeName(client);
        try {
            if (add) {
                client.add(device);
            } else {
                client.remove(device);
            }
            LOG.debug("IB client {} {} device {}", who, add ? "added" : "removed", device.name());
            return true;
        } catch (RuntimeException | LinkageError e) {
            LOG.error("IB client {} failed to {} device {}; {}", who, add ? "add" : "remove", device.name(),
                    add ? "the device is not handed to it" : "treating it as removed", e);
            return false;
        }
    }

    private static String safeName(IbClient client) {
        try {
            return client.clientName();
        } catch (RuntimeException e) {
            return client.getClass().getName();
        }
    }

    private static <T> Set<T> identitySet() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    /** Rebuild the console's view; under the lock, after every membership change. */
    private void publishView() {
        Map<RdmaDevice, List<String>> snapshot = new LinkedHashMap<>();
        for (RdmaDevice d : deviceOrder) {
            List<String> names = new ArrayList<>();
            for (IbClient c : clientOrder) {
                if (devices.get(d).contains(c)) {
                    names.add(safeName(c));
                }
            }
            snapshot.put(d, List.copyOf(names));
        }
        view = snapshot;
    }

    /** Never waits for the lock: a console must not hang behind a slow {@code add}. */
    @Override
    public List<RdmaDeviceInfo> devices() {
        List<RdmaDeviceInfo> out = new ArrayList<>();
        for (Map.Entry<RdmaDevice, List<String>> e : view.entrySet()) {
            RdmaDevice d = e.getKey();
            List<String> addresses = new ArrayList<>();
            for (InetAddress a : d.addresses()) {
                addresses.add(a.getHostAddress());
            }
            out.add(new RdmaDeviceInfo(d.name(), d.provider(), d.nodeId(), d.linkState(), addresses, e.getValue(),
                    d.counters()));
        }
        out.sort(Comparator.comparing(RdmaDeviceInfo::name));
        return out;
    }
}
