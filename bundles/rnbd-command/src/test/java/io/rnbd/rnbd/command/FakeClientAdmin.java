package io.rnbd.rnbd.command;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

class FakeClientAdmin implements RnbdClientAdmin {
    final Map<String, DeviceInfo> devices = new TreeMap<>();
    final List<String> calls = new ArrayList<>();
    /** What the next remap/resize answer is; null: a new state or size applies. */
    IOException failNext;
    long serverSize = 2L << 30;

    static DeviceInfo device(String name, DeviceState state, int users, int lastError) {
        return new DeviceInfo(name, "sess1", "vol1", AccessMode.RW, state == DeviceState.MAPPED ? 1L << 30 : 0,
                state, users, new BlockIoStats(1, 4096, 2, 8192, 0, 3), lastError);
    }

    FakeClientAdmin put(DeviceInfo d) {
        devices.put(d.name(), d);
        return this;
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.copyOf(devices.values());
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode) {
        throw new UnsupportedOperationException("rnbd:map goes through ConfigAdmin");
    }

    @Override
    public void unmap(String device, boolean force) throws IOException {
        calls.add("unmap " + device + " " + force);
        DeviceInfo d = devices.get(device);
        if (d == null) {
            throw new BlockIoException(Errno.ENOENT, "no device " + device);
        }
        if (!force && (d.users() > 0 || d.stats().inflight() > 0)) {
            throw new BlockIoException(Errno.EBUSY, device + " is in use");
        }
        devices.remove(device);
    }

    @Override
    public CompletableFuture<RemoteBlockDevice> remap(String device) {
        calls.add("remap " + device);
        if (failNext != null) {
            return CompletableFuture.failedFuture(failNext);
        }
        DeviceInfo d = devices.get(device);
        devices.put(device, new DeviceInfo(d.name(), d.session(), d.export(), d.mode(), 1L << 30,
                DeviceState.MAPPED, d.users(), d.stats(), 0));
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<String> failback(String device, String session) throws IOException {
        calls.add("failback " + device + " " + session);
        DeviceInfo d = devices.get(device);
        if (d == null) {
            throw new BlockIoException(Errno.ENOENT, "no device " + device);
        }
        if (d.ha().sessions().isEmpty()) {
            throw new BlockIoException(Errno.EINVAL, "device " + device + " is mapped over one server");
        }
        if (failNext != null) {
            return CompletableFuture.failedFuture(failNext);
        }
        String to = session.isEmpty() ? d.ha().sessions().get(0) : session;
        devices.put(device, new DeviceInfo(d.name(), to, d.export(), d.mode(), d.size(), d.state(), d.users(), d.stats(),
                0, new HaDeviceInfo(d.ha().sessions(), to, d.ha().activeSince(), d.ha().generation() + 1,
                d.ha().takeovers() + 1, 90, Math.max(90, d.ha().maxStallMs()))));
        return CompletableFuture.completedFuture(to);
    }

    @Override
    public CompletableFuture<Long> resize(String device) {
        calls.add("resize " + device);
        if (failNext != null) {
            return CompletableFuture.failedFuture(failNext);
        }
        return CompletableFuture.completedFuture(serverSize);
    }

    // the operations: what the faces passed, and the answer they print

    /** The next operation's failure; null: it succeeds with {@link #answer}. */
    IOException failOp;
    String answer = "done";

    private DeviceResult op(String call) throws IOException {
        calls.add(call);
        if (failOp != null) {
            throw failOp;
        }
        return new DeviceResult(null, 0, answer);
    }

    @Override
    public DeviceResult mapDevice(MapRequest r) throws IOException {
        return op("mapDevice " + r);
    }

    @Override
    public DeviceResult unmapDevice(String device, boolean force) throws IOException {
        return op("unmapDevice " + device + " " + force);
    }

    @Override
    public DeviceResult remapDevice(String device) throws IOException {
        return op("remapDevice " + device);
    }

    @Override
    public DeviceResult resizeDevice(String device) throws IOException {
        return op("resizeDevice " + device);
    }
}
