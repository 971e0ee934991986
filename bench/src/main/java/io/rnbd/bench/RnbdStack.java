package io.rnbd.bench;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.backend.memory.internal.MemoryBackend;
import io.rnbd.rnbd.client.internal.DevicePublisher;
import io.rnbd.rnbd.client.internal.RnbdClient;
import io.rnbd.rnbd.server.internal.ExportConfig;
import io.rnbd.rnbd.server.internal.RnbdServer;
import io.rnbd.rtrs.server.internal.ServerConfig;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A mapped RNBD device in this JVM: the memory backend (or one given) behind an RNBD server export ("disk"),
 * the RNBD server as the RTRS server's upper layer, RTRS over two rdma-soft devices on
 * loopback ({@link SoftStack}), the RNBD client mapping the export as {@code rnbd0}. What the
 * appliance does across two Karaf instances, minus OSGi.
 */
final class RnbdStack implements AutoCloseable {
    /** The server's default chunk.size, 256 KiB: max IO = chunk - 4 KiB, so 128 KiB requests are not split. */
    static final int CHUNK = ServerConfig.DEFAULT_CHUNK_SIZE;

    private final ScheduledExecutorService scheduler;
    private final MemoryBackend memory;
    private final RnbdServer server;
    private final SoftStack rtrs;
    private final RnbdClient client;
    final RemoteBlockDevice device;

    RnbdStack(String size, boolean alwaysInvalidate) throws Exception {
        this(new MemoryBackend(), Map.of("size", size), alwaysInvalidate);
    }

    /** The export "disk" on {@code backend} opened with {@code params}; a memory backend is closed with the stack. */
    RnbdStack(BlockBackend backend, Map<String, String> params, boolean alwaysInvalidate) throws Exception {
        memory = backend instanceof MemoryBackend m ? m : null;
        scheduler = RnbdServer.newScheduler("bench-rnbd-server");
        server = new RnbdServer(scheduler);
        server.backendAdded(backend.type(), backend);
        server.addExport(new ExportConfig("disk", backend.type(), false, Set.of(), 0, params));
        rtrs = new SoftStack(new ServerConfig(0, CHUNK, ServerConfig.DEFAULT_QUEUE_DEPTH, alwaysInvalidate, 5000, 5), server);
        client = new RnbdClient(DevicePublisher.NONE);
        client.sessionAdded(rtrs.session);
        device = client.map("rnbd0", SoftStack.SESSION, "disk", AccessMode.RW).get(20, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        client.close();
        rtrs.close();
        server.close();
        if (memory != null) {
            memory.close();
        }
        scheduler.shutdownNow();
        scheduler.awaitTermination(5, TimeUnit.SECONDS);
    }
}
