package io.rnbd.rnbd.backend.memory.internal;

import io.rnbd.rnbd.api.Sizes;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code memory} backend: every {@link #open} creates a new, empty, sparse device whose data
 * lives until the device (or this backend) is closed. Parameters: {@code size} (required).
 * Also a {@link java.util.ServiceLoader} provider, so load generators can use it outside OSGi.
 */
public final class MemoryBackend implements BlockBackend, AutoCloseable {
    public static final String TYPE = "memory";
    /** Largest device: keeps the page directory of a sparse device small. */
    public static final long MAX_SIZE = 1L << 46;

    private final Set<MemoryBlockDevice> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        if (closed) {
            throw new IOException("memory backend is stopped");
        }
        long size = size(params);
        MemoryBlockDevice dev = new MemoryBlockDevice(size, readOnly, open::remove);
        open.add(dev);
        if (closed) {
            dev.close();
            throw new IOException("memory backend is stopped");
        }
        return dev;
    }

    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        size(params);
    }

    /** The device size {@code params} ask for, or why they cannot open. */
    private static long size(Map<String, String> params) throws IOException {
        for (String key : params.keySet()) {
            if (!key.equals("size")) {
                throw new IOException("memory backend: unknown parameter '" + key + "' (takes: size)");
            }
        }
        String text = params.get("size");
        if (text == null || text.isBlank()) {
            throw new IOException("memory backend: parameter 'size' is required (e.g. size=1g)");
        }
        long size;
        try {
            size = Sizes.parse("size=" + text, text);
        } catch (IllegalArgumentException e) {
            throw new IOException("memory backend: " + e.getMessage());
        }
        checkSize("size=" + text, size);
        return size;
    }

    /** A size the memory backend can hold: a positive multiple of 512, at most {@link #MAX_SIZE}. */
    static void checkSize(String what, long size) throws IOException {
        if (size <= 0 || size % MemoryBlockDevice.SECTOR != 0) {
            throw new IOException("memory backend: " + what + " must be a positive multiple of "
                    + MemoryBlockDevice.SECTOR);
        }
        if (size > MAX_SIZE) {
            throw new IOException("memory backend: " + what + " exceeds the limit of 64t");
        }
    }

    /** Devices open now (for tests: validate must open nothing). */
    int openCount() {
        return open.size();
    }

    /** Closes every device still open: a stopped backend leaves no memory behind. */
    @Override
    public void close() {
        closed = true;
        for (MemoryBlockDevice dev : open) {
            dev.close();
        }
    }
}
