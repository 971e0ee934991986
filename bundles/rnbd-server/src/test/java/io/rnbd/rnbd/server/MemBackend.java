package io.rnbd.rnbd.server;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A test backend: {@code size} (bytes) and {@code id} params; devices opened with the same id
 * share storage, so data survives the backend going away and coming back.
 */
public final class MemBackend implements BlockBackend {
    private final Map<String, byte[]> stores = new ConcurrentHashMap<>();
    private final Map<String, MemBlockDevice> open = new ConcurrentHashMap<>();
    private final int maxIo;
    /** Ids whose open fails as a file backend's does while the file is missing. */
    private final java.util.Set<String> missing = ConcurrentHashMap.newKeySet();

    public MemBackend(int maxIo) {
        this.maxIo = maxIo;
    }

    public MemBackend() {
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
        MemBlockDevice d = new MemBlockDevice(store, readOnly, maxIo);
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
    public MemBlockDevice device(String id) {
        return open.get(id);
    }

    public byte[] store(String id) {
        return stores.get(id);
    }
}
