package io.rnbd.testkit.block;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link BlockBackend} of type {@code memory} over {@link FakeBlockDevice}s, for tests of
 * the RNBD server and what stacks on it. Parameters {@code size} (bytes, default 1 MiB) and
 * {@code id}: devices opened with the same id share their bytes, so data survives the backend
 * going away and coming back, and a test reads what landed ({@link #store}).
 */
public final class FakeBackend implements BlockBackend {
    private final Map<String, byte[]> stores = new ConcurrentHashMap<>();
    private final Map<String, FakeBlockDevice> open = new ConcurrentHashMap<>();
    private final int maxIo;
    /** Ids whose open fails as a file backend's does while the file is missing. */
    private final Set<String> missing = ConcurrentHashMap.newKeySet();

    /** Devices whose largest READ or WRITE is {@code maxIo} bytes. */
    public FakeBackend(int maxIo) {
        this.maxIo = maxIo;
    }

    public FakeBackend() {
        this(128 * 1024);
    }

    @Override
    public String type() {
        return "memory";
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        String id = params.getOrDefault("id", "default");
        if (missing.contains(id)) {
            throw new IOException(id + ": no such file");
        }
        int size;
        try {
            size = Integer.parseInt(params.getOrDefault("size", "1048576"));
        } catch (NumberFormatException e) {
            throw new IOException("bad size");
        }
        byte[] store = stores.computeIfAbsent(id, k -> new byte[size]);
        FakeBlockDevice d = new FakeBlockDevice(store).withMaxIoSize(maxIo);
        if (readOnly) {
            d.readOnly();
        }
        open.put(id, d);
        return d;
    }

    /** From now on, opens of {@code id} fail ("no such file") until {@link #appear}. */
    public void missing(String id) {
        missing.add(id);
    }

    public void appear(String id) {
        missing.remove(id);
    }

    /** The device last opened for {@code id}. */
    public FakeBlockDevice device(String id) {
        return open.get(id);
    }

    /** The bytes of {@code id}, shared with its devices. */
    public byte[] store(String id) {
        return stores.get(id);
    }
}
