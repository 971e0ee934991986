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

    /** The device last opened for {@code id}. */
    public MemBlockDevice device(String id) {
        return open.get(id);
    }

    public byte[] store(String id) {
        return stores.get(id);
    }
}
