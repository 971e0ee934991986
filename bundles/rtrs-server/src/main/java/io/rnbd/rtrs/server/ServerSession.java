package io.rnbd.rtrs.server;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsServerPathInfo;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A client session on the server: its chunks (one per client permit, shared by all its
 * paths) and its paths by UUID. The session object is the lock for all of them.
 */
public final class ServerSession implements RtrsServerSession {
    final RtrsServer server;
    private final UUID uuid;
    /**
     * The chunks, allocated when the session's first path finishes its handshake: a connect
     * request costs no chunk memory (64 MiB at the defaults), so nobody can make the server
     * allocate it without authenticating.
     */
    private ByteBuffer[] chunks;
    private final int chunkSize;
    /**
     * Per chunk, under the lock: the request the upper layer has on it (null: free), and a
     * copy of it that a client failed over to another path while the first still runs
     * (rtrs_clt_failover_req resends with the same permit, so the same chunk). See
     * {@link ServerIo#onIoReq}.
     */
    final ServerRequest[] chunkHolder;
    final ServerRequest[] chunkNext;
    final Map<UUID, ServerPath> paths = new LinkedHashMap<>();
    final ServerStats stats = new ServerStats();
    private volatile String name = "";
    private volatile String hostId = "";
    private volatile boolean hostIdProven;
    private volatile String authMethod = "";
    /** Sticky: a path of this session said it speaks the extensions (ConReq.EXT_F). */
    volatile boolean extensions;
    /** Under the lock: the first path to connect gave the session its identity. */
    private boolean identityBound;
    boolean announced;
    /** Set once, when the session leaves the server for good; see {@link #closed()}. */
    private volatile boolean closed;
    /** Whether the upper layer was told of the close already (at most once). */
    private final java.util.concurrent.atomic.AtomicBoolean closeAnnounced = new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.ArrayDeque<Runnable> closers = new java.util.ArrayDeque<>();

    /** Under the lock: queue work that waits for a provider thread (closing queue pairs). */
    void closeAfterUnlock(Runnable r) {
        closers.add(r);
    }

    /**
     * Outside the lock: hand what {@link #closeAfterUnlock} queued to the timer thread.
     * Closing a queue pair waits for its provider thread, and we may be on another
     * device's provider thread (a session's paths span devices): two of them closing
     * each other's queue pairs inline would wait for each other forever. Device removal
     * does not depend on this: {@link RtrsServer#remove} closes that device's queue pairs
     * and protection domain itself.
     */
    void runClosers() {
        if (Thread.holdsLock(this)) {
            return;
        }
        while (true) {
            Runnable r;
            synchronized (this) {
                r = closers.poll();
            }
            if (r == null) {
                return;
            }
            try {
                server.timer().execute(r);
            } catch (java.util.concurrent.RejectedExecutionException stopped) {
                r.run();
            }
        }
    }

    ServerSession(RtrsServer server, UUID uuid, int queueDepth, int chunkSize) {
        this.server = server;
        this.uuid = uuid;
        this.chunkSize = chunkSize;
        this.chunkHolder = new ServerRequest[queueDepth];
        this.chunkNext = new ServerRequest[queueDepth];
    }

    /** Under the lock: the chunks, allocated on first use (a path's INFO_REQ). */
    ByteBuffer[] chunks() {
        if (chunks == null) {
            ByteBuffer[] c = new ByteBuffer[chunkHolder.length];
            for (int i = 0; i < c.length; i++) {
                c[i] = ByteBuffer.allocateDirect(chunkSize);
            }
            chunks = c;
        }
        return chunks;
    }


    /** Chunks (permits) of this session: the queue depth it was created with, whatever queue.depth is now. */
    int queueDepth() {
        return chunkHolder.length;
    }

    int chunkSize() {
        return chunkSize;
    }

    /** The chunk less the room for headers, as CON_RSP's max_io_size. */
    int maxIoSize() {
        return chunkSize - io.rnbd.rtrs.proto.Rtrs.CHUNK_RESERVE;
    }

    @Override
    public String name() {
        return name;
    }

    void name(String n) {
        this.name = n;
    }

    @Override
    public String hostId() {
        return hostId;
    }

    @Override
    public boolean hostIdProven() {
        return hostIdProven;
    }

    @Override
    public boolean extensions() {
        return extensions;
    }

    @Override
    public String authMethod() {
        return authMethod;
    }

    /**
     * Under the lock, as a path finishes its handshake: the first path gives the session the
     * identity it authenticated with; every later path must present the same host id, and if
     * the session's was proven, prove it too. A path that proves an id the session only
     * claimed joins it, and the session stays unproven: its first path proved nothing.
     *
     * @return why the path may not join, or null
     */
    String bindIdentity(String host, boolean proven, String method) {
        if (!identityBound) {
            identityBound = true;
            hostId = host;
            hostIdProven = proven;
            authMethod = method;
            return null;
        }
        if (!hostId.equals(host)) {
            return "the path says host id '" + host + "', the session's is '" + hostId + "'";
        }
        if (hostIdProven && !proven) {
            return "the session's host id '" + hostId + "' was proven (" + authMethod + "), this path's is not ("
                    + (method.isEmpty() ? "no authentication" : method) + ")";
        }
        return null;
    }

    @Override
    public UUID uuid() {
        return uuid;
    }

    @Override
    public synchronized int pathCount() {
        int n = 0;
        for (ServerPath p : paths.values()) {
            if (p.connected()) {
                n++;
            }
        }
        return n;
    }

    /** Under the lock: whether a live path already joins these two addresses (ports aside). */
    boolean hasPathBetween(java.net.InetSocketAddress local, java.net.InetSocketAddress remote) {
        for (ServerPath p : paths.values()) {
            if (!p.closingOrClosed() && p.localAddr.equals(local.getAddress())
                    && p.remoteAddr.equals(remote.getAddress())) {
                return true;
            }
        }
        return false;
    }

    public ServerStats stats() {
        return stats;
    }

    @Override
    public boolean closed() {
        return closed;
    }

    /** The session left the server: no path may join it, and the upper layer must let go of it. */
    void markClosed() {
        closed = true;
    }

    /** True the first time only: whoever gets it tells the upper layer the session closed. */
    boolean takeCloseAnnouncement() {
        return closeAnnounced.compareAndSet(false, true);
    }

    @Override
    public void close() {
        List<ServerPath> ps;
        synchronized (this) {
            ps = new ArrayList<>(paths.values());
        }
        for (ServerPath p : ps) {
            p.fail(Errno.ECONNRESET, "session closed");
        }
    }

    synchronized RtrsServerSessionInfo info() {
        List<RtrsServerPathInfo> ps = new ArrayList<>();
        for (ServerPath p : paths.values()) {
            ps.add(p.info());
        }
        return new RtrsServerSessionInfo(name, hostId, uuid, chunkHolder.length, chunkSize, ps, stats.snapshot());
    }

    @Override
    public String toString() {
        return "session " + name + " (" + uuid + ")";
    }
}
