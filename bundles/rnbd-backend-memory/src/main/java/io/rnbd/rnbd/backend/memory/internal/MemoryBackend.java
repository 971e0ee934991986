package io.rnbd.rnbd.backend.memory.internal;

import io.rnbd.rnbd.api.Sizes;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code memory} backend: a sparse device per export whose data lives as long as the export
 * does, in a store kept by name in a holder that outlives this backend ({@link MemoryStores}):
 * closing the device, stopping or updating this backend's bundle keep it, and the export's next
 * {@link #open(String, Map, boolean)} finds it; {@link #release} frees it. An open without an
 * export name gets a private device whose data goes when it closes. Parameters: {@code size}
 * (required; an export whose store is kept has the store's size, which a resize may have changed).
 * Also a {@link java.util.ServiceLoader} provider, so load generators can use it outside OSGi.
 */
public final class MemoryBackend implements BlockBackend, AutoCloseable {
    public static final String TYPE = "memory";
    /** Largest device: keeps the page directory of a sparse device small. */
    public static final long MAX_SIZE = 1L << 46;
    private static final Logger LOG = LoggerFactory.getLogger(MemoryBackend.class);

    private final Set<MemoryBlockDevice> open = ConcurrentHashMap.newKeySet();
    private final MemoryStores stores;
    private volatile boolean closed;

    /** With a holder of its own: the stores live as long as this backend (tools, tests). */
    public MemoryBackend() {
        this(new ConcurrentHashMap<>());
    }

    /**
     * @param holder where the exports' stores are kept, JDK objects by export name: hand the
     *               same holder to the next backend and it finds the data
     */
    public MemoryBackend(ConcurrentMap<String, Object> holder) {
        this.stores = new MemoryStores(holder);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        checkRunning();
        return track(new MemoryBlockDevice(MemoryStore.empty(size(params)), false, readOnly, open::remove));
    }

    /** The export's device on its kept store, or on a new empty one of {@code size}. */
    @Override
    public BlockDevice open(String export, Map<String, String> params, boolean readOnly) throws IOException {
        checkRunning();
        long size = size(params);
        MemoryStores.Attached a = stores.attach(export, size);
        MemoryBlockDevice dev = new MemoryBlockDevice(a.store(), true, readOnly, open::remove);
        if (!a.kept()) {
            LOG.info("memory export {}: new and empty, {} bytes", export, size);
        } else {
            long kept = a.store().size().get();
            LOG.info("memory export {}: its memory kept, {} bytes ({} in pages){}", export, kept,
                    a.store().allocatedPages().get() << MemoryBlockDevice.PAGE_SHIFT,
                    kept == size ? "" : "; size=" + size + " is what it was created with");
        }
        return track(dev);
    }

    @Override
    public void release(String export) {
        if (stores.release(export)) {
            LOG.info("memory export {}: removed, its memory freed", export);
        }
    }

    private void checkRunning() throws IOException {
        if (closed) {
            throw new IOException("memory backend is stopped");
        }
    }

    private BlockDevice track(MemoryBlockDevice dev) throws IOException {
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

    /**
     * Closes every device still open: their requests fail from now on; an export's store stays
     * in the holder for the next backend, a private device's memory is freed.
     */
    @Override
    public void close() {
        closed = true;
        for (MemoryBlockDevice dev : open) {
            dev.close();
        }
    }
}
