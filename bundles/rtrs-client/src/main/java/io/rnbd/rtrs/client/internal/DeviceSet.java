package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The devices the registry handed to the RTRS client (it is the client's {@link IbClient}).
 * Sessions connect paths only through devices in here; {@code remove} makes every path on
 * the device let go before it returns.
 */
public final class DeviceSet implements IbClient {
    private final List<RdmaDevice> devices = new CopyOnWriteArrayList<>();
    private final List<Consumer<RdmaDevice>> removalListeners = new CopyOnWriteArrayList<>();

    @Override
    public String clientName() {
        return "rtrs-client";
    }

    @Override
    public void add(RdmaDevice device) {
        devices.add(device);
    }

    @Override
    public void remove(RdmaDevice device) {
        devices.remove(device);
        removalListeners.forEach(l -> l.accept(device));
    }

    /** The device to reach a path from: the one owning {@code src}, or the first one when src is null. */
    RdmaDevice find(InetAddress src) {
        for (RdmaDevice d : devices) {
            if (src == null || d.addresses().contains(src)) {
                return d;
            }
        }
        return null;
    }

    void listen(Consumer<RdmaDevice> onRemove) {
        removalListeners.add(onRemove);
    }

    void unlisten(Consumer<RdmaDevice> onRemove) {
        removalListeners.remove(onRemove);
    }
}
