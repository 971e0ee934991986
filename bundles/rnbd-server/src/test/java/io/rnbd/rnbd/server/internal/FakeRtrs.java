package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.IoDone;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-JVM RTRS: client sessions wired straight to an {@link RtrsServerOps}. Asynchronous
 * (requests reach the server on server threads, completions the client on client threads)
 * and copying (headers and data are copied as the wire would), with a permit limit, so
 * the upper layers see what a real transport gives them.
 */
public final class FakeRtrs implements AutoCloseable {
    private final RtrsServerOps server;
    private final AtomicInteger violations = new AtomicInteger();
    private final ExecutorService serverThreads = Executors.newFixedThreadPool(2, r -> daemon(r, "fake-rtrs-srv"));
    private final ExecutorService clientThreads = Executors.newFixedThreadPool(2, r -> daemon(r, "fake-rtrs-clt"));

    public FakeRtrs(RtrsServerOps server) {
        this.server = server;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Requests the upper layer completed more than once (must stay 0). */
    public int violations() {
        return violations.get();
    }

    public Client connect(String name) {
        return connect(name, "", 64, 128 * 1024 - 4096, false);
    }

    /**
     * @param queueWhileDown true: requests wait while disconnected (io.timeout.ms &gt; 0);
     *                       false: they fail at once with EIO, as the kernel does
     */
    public Client connect(String name, String hostId, int queueDepth, int maxIoSize, boolean queueWhileDown) {
        Client c = new Client(name, hostId, queueDepth, maxIoSize, queueWhileDown);
        c.reconnect();
        return c;
    }

    /**
     * A client whose host id {@code hostId} came from authenticator {@code method} ("" = it
     * did not authenticate and speaks no extensions, as a Linux client), proven or only claimed.
     */
    public Client connectAs(String name, String hostId, String method, boolean proven) {
        Client c = new Client(name, hostId, 64, 128 * 1024 - 4096, false);
        c.authMethod = method;
        c.extensions = !method.isEmpty();
        c.proven = proven;
        c.reconnect();
        return c;
    }

    /** Completions after shutdown run inline, so none is lost. */
    private void onClientThread(Runnable r) {
        try {
            clientThreads.execute(r);
        } catch (RejectedExecutionException shutDown) {
            r.run();
        }
    }

    @Override
    public void close() throws InterruptedException {
        serverThreads.shutdown();
        serverThreads.awaitTermination(10, TimeUnit.SECONDS);
        clientThreads.shutdown();
        clientThreads.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** The server side of one (re)connection. */
    public static final class ServerSide implements RtrsServerSession {
        private final Client client;
        private final UUID uuid = UUID.randomUUID();
        /**
         * Set before the server hears of the close, as the RTRS server marks a session closed
         * before it announces it: a request still in flight then finds it closed (RnbdServer's
         * sessionOf), where an open made for it would hold the export for good.
         */
        private volatile boolean closed;

        ServerSide(Client client) {
            this.client = client;
        }

        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public String name() {
            return client.name;
        }

        @Override
        public String hostId() {
            return client.hostId;
        }

        @Override
        public boolean hostIdProven() {
            return client.proven;
        }

        @Override
        public String authMethod() {
            return client.authMethod;
        }

        @Override
        public boolean extensions() {
            return client.extensions;
        }

        @Override
        public UUID uuid() {
            return uuid;
        }

        @Override
        public int pathCount() {
            return client.state() == SessionState.CONNECTED ? 1 : 0;
        }

        @Override
        public void close() {
            client.disconnect();
        }
    }

    private record Req(ByteBuffer hdr, ByteBuffer data, ByteBuffer dst, boolean write, IoDone done) {
    }

    public final class Client implements RtrsClientSession {
        private final String name;
        private final String hostId;
        private final int queueDepth;
        private final int maxIoSize;
        private final boolean queueWhileDown;
        private String authMethod = "";
        /** This appliance's client (ConReq.EXT_F) unless connected as Linux's. */
        private boolean extensions = true;
        private boolean proven;
        private final List<RtrsSessionListener> listeners = new CopyOnWriteArrayList<>();
        private final ArrayDeque<Req> waiting = new ArrayDeque<>();
        /** Requests the server has and not answered; guarded by this. */
        private final java.util.Set<Req> sent = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        private final AtomicInteger delivered = new AtomicInteger();
        private SessionState state = SessionState.CONNECTING;
        private ServerSide serverSide;
        private int inflight;

        Client(String name, String hostId, int queueDepth, int maxIoSize, boolean queueWhileDown) {
            this.name = name;
            this.hostId = hostId;
            this.queueDepth = queueDepth;
            this.maxIoSize = maxIoSize;
            this.queueWhileDown = queueWhileDown;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public synchronized SessionState state() {
            return state;
        }

        @Override
        public int lastError() {
            return 0;
        }

        @Override
        public int queueDepth() {
            return queueDepth;
        }

        @Override
        public int maxIoSize() {
            return maxIoSize;
        }

        @Override
        public int maxHdrSize() {
            return 4096;
        }

        /** Requests the server has seen so far. */
        public int delivered() {
            return delivered.get();
        }

        public synchronized ServerSide serverSide() {
            return serverSide;
        }

        @Override
        public void write(ByteBuffer usrHdr, ByteBuffer data, IoDone done) {
            submit(new Req(copy(usrHdr), copy(data), null, true, done));
        }

        @Override
        public void read(ByteBuffer usrHdr, ByteBuffer dst, IoDone done) {
            submit(new Req(copy(usrHdr), ByteBuffer.allocate(dst.remaining()), dst.duplicate(), false, done));
        }

        private ByteBuffer copy(ByteBuffer b) {
            ByteBuffer c = ByteBuffer.allocate(b.remaining());
            c.put(b.duplicate()).flip();
            return c;
        }

        private void submit(Req r) {
            if (r.hdr().remaining() > maxHdrSize() || r.data().remaining() > maxIoSize) {
                onClientThread(() -> r.done().done(Errno.EMSGSIZE));
                return;
            }
            ServerSide target;
            synchronized (this) {
                if (state == SessionState.CLOSED || state == SessionState.FAILED) {
                    onClientThread(() -> r.done().done(Errno.ESHUTDOWN));
                    return;
                }
                if (state != SessionState.CONNECTED && !queueWhileDown) {
                    onClientThread(() -> r.done().done(Errno.EIO));
                    return;
                }
                if (state != SessionState.CONNECTED || inflight >= queueDepth) {
                    waiting.add(r);
                    return;
                }
                inflight++;
                sent.add(r);
                target = serverSide;
            }
            dispatch(target, r);
        }

        private void dispatch(ServerSide target, Req r) {
            try {
                serverThreads.execute(() -> {
                    delivered.incrementAndGet();
                    server.onRequest(new Request(target, r));
                });
            } catch (RejectedExecutionException shutDown) {
                r.done().done(Errno.ESHUTDOWN);
            }
        }

        private void finished(Req r, int errno) {
            onClientThread(() -> {
                Req next;
                ServerSide target;
                boolean mine;
                synchronized (this) {
                    mine = sent.remove(r);
                    inflight--;
                    next = state == SessionState.CONNECTED ? waiting.poll() : null;
                    if (next != null) {
                        inflight++;
                        sent.add(next);
                    }
                    target = serverSide;
                }
                if (mine) {
                    // not failed already by failOutstanding: the answer counts
                    if (errno == 0 && !r.write()) {
                        r.dst().put(r.data().duplicate().clear());
                    }
                    r.done().done(errno);
                }
                if (next != null) {
                    dispatch(target, next);
                }
            });
        }

        /**
         * What waits for a path fails now (ClientSession's failOutstanding); while disconnected,
         * what the server has too (a real session's path failure took those back already): its
         * late answer is dropped.
         */
        @Override
        public void failOutstanding(int errno) {
            List<Req> failed;
            synchronized (this) {
                failed = new java.util.ArrayList<>(waiting);
                waiting.clear();
                if (state != SessionState.CONNECTED) {
                    failed.addAll(sent);
                    sent.clear();
                }
            }
            failed.forEach(r -> onClientThread(() -> r.done().done(errno)));
        }

        /** Lose every path: the server forgets the session; requests in flight still complete. */
        public void disconnect() {
            ServerSide old;
            List<Req> failed = List.of();
            synchronized (this) {
                if (state != SessionState.CONNECTED) {
                    return;
                }
                state = SessionState.DISCONNECTED;
                old = serverSide;
                old.closed = true;
                if (!queueWhileDown) {
                    failed = List.copyOf(waiting);
                    waiting.clear();
                }
            }
            failed.forEach(r -> onClientThread(() -> r.done().done(Errno.EIO)));
            server.onSessionClosed(old);
            listeners.forEach(l -> l.onStateChange(this, SessionState.DISCONNECTED, Errno.ECONNRESET));
        }

        /** A path is back: a new server-side session; waiting requests go out. */
        public void reconnect() {
            List<Req> go;
            ServerSide target;
            synchronized (this) {
                if (state == SessionState.CONNECTED || state == SessionState.CLOSED) {
                    return;
                }
                serverSide = new ServerSide(this);
                target = serverSide;
            }
            server.onSessionConnected(target);
            synchronized (this) {
                state = SessionState.CONNECTED;
                int n = Math.min(waiting.size(), queueDepth - inflight);
                go = new java.util.ArrayList<>();
                for (int i = 0; i < n; i++) {
                    go.add(waiting.poll());
                }
                inflight += go.size();
                sent.addAll(go);
            }
            listeners.forEach(l -> l.onStateChange(this, SessionState.CONNECTED, 0));
            go.forEach(r -> dispatch(target, r));
        }

        @Override
        public void addListener(RtrsSessionListener listener) {
            listeners.add(listener);
        }

        @Override
        public void removeListener(RtrsSessionListener listener) {
            listeners.remove(listener);
        }

        @Override
        public void close() {
            ServerSide old;
            List<Req> failed;
            boolean wasConnected;
            synchronized (this) {
                if (state == SessionState.CLOSED) {
                    return;
                }
                wasConnected = state == SessionState.CONNECTED;
                state = SessionState.CLOSED;
                old = serverSide;
                if (wasConnected) {
                    old.closed = true;
                }
                failed = List.copyOf(waiting);
                waiting.clear();
            }
            failed.forEach(r -> onClientThread(() -> r.done().done(Errno.ESHUTDOWN)));
            if (wasConnected) {
                server.onSessionClosed(old);
            }
            listeners.forEach(l -> l.onStateChange(this, SessionState.CLOSED, 0));
        }
    }

    private final class Request implements RtrsServerRequest {
        private final ServerSide session;
        private final Req req;
        private final AtomicBoolean completed = new AtomicBoolean();

        Request(ServerSide session, Req req) {
            this.session = session;
            this.req = req;
        }

        @Override
        public RtrsServerSession session() {
            return session;
        }

        @Override
        public boolean isWrite() {
            return req.write();
        }

        @Override
        public ByteBuffer userHeader() {
            return req.hdr().asReadOnlyBuffer();
        }

        @Override
        public ByteBuffer data() {
            return req.write() ? req.data().asReadOnlyBuffer() : req.data().duplicate().clear();
        }

        @Override
        public void complete(int errno) {
            if (!completed.compareAndSet(false, true)) {
                violations.incrementAndGet();
                return;
            }
            session.client.finished(req, errno);
        }
    }
}
