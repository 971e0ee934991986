package io.rnbd.nbd.gateway.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;
import io.rnbd.nbd.gateway.internal.io.BufferPool;
import io.rnbd.nbd.proto.NbdConstants;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An NBD server (fixed newstyle, NBD_OPT_GO, structured replies) over block devices found by
 * name. One acceptor thread per listener, a reader and a writer thread per connection.
 */
public final class NbdServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdServer.class);
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private final NbdServerConfig config;
    private final ExportLookup exports;
    private final BufferPool pool = new BufferPool(NbdConstants.MAX_PAYLOAD, 128L * 1024 * 1024);
    private final Set<NbdConnection> connections = ConcurrentHashMap.newKeySet();
    private final List<ServerSocketChannel> listeners = new ArrayList<>();
    private final List<Thread> acceptors = new ArrayList<>();
    private final AtomicLong ids = new AtomicLong();
    private final NbdServerStats stats = new NbdServerStats();
    private final ScheduledExecutorService timer;
    private final boolean ownTimer;
    private final LongSupplier nanoTime;
    private volatile boolean closed;
    /** Each polling reader's busy poll, from poll.usec in nanoseconds; tests give their own. */
    private volatile LongFunction<AdaptivePoll> polls =
            n -> new AdaptivePoll(n, SpareCpu.system(), System::nanoTime);
    private InetSocketAddress tcpAddress;
    private Path unixPath;

    /** The busy poll of each polling reader (for tests: a fixed window, a probe that always sees a spare CPU). */
    void polls(LongFunction<AdaptivePoll> factory) {
        this.polls = factory;
    }

    public NbdServer(NbdServerConfig config, ExportLookup exports) throws IOException {
        this(config, exports, null);
    }

    /**
     * @param timer runs handshake timeouts; null to have the server create (and shut down) its own
     */
    public NbdServer(NbdServerConfig config, ExportLookup exports, ScheduledExecutorService timer)
            throws IOException {
        this(config, exports, timer, System::nanoTime);
    }

    /**
     * @param timer    runs handshake and idle timeouts; null to have the server create (and shut down) its own
     * @param nanoTime the clock the idle timeout reads (tests pass the fake scheduler's)
     */
    public NbdServer(NbdServerConfig config, ExportLookup exports, ScheduledExecutorService timer,
                     LongSupplier nanoTime) throws IOException {
        this.config = config;
        this.nanoTime = nanoTime;
        this.exports = exports;
        this.ownTimer = timer == null;
        this.timer = timer != null ? timer : Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nbd-timer");
            t.setDaemon(true);
            return t;
        });
        try {
            if (config.tcp() != null) {
                ServerSocketChannel tcp = ServerSocketChannel.open();
                tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                tcp.bind(config.tcp());
                listeners.add(tcp);
                tcpAddress = (InetSocketAddress) tcp.getLocalAddress();
                startAcceptor(tcp, "tcp", config.tls());
            }
            if (config.unixSocket() != null) {
                removeStaleSocket(config.unixSocket());
                ServerSocketChannel unix = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                unix.bind(UnixDomainSocketAddress.of(config.unixSocket()));
                listeners.add(unix);
                unixPath = config.unixSocket();
                // TLS is offered on TCP only: the JDK layers TLS over TCP sockets, and a Unix socket is
                // reached only through the file system, whose permissions guard it.
                startAcceptor(unix, "unix", TlsPolicy.OFF);
                UnixSendBuffer.hint(UnixSendBuffer.WMEM_DEFAULT).ifPresent(h -> LOG.warn("NBD gateway: host tuning: {}", h));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
        LOG.info("NBD gateway listening on {}{} (tls={}, idle timeout {})", tcpAddress == null ? "" : tcpAddress,
                unixPath == null ? "" : " unix:" + unixPath, config.tls().mode().name().toLowerCase(),
                config.idleTimeout().isZero() ? "off" : config.idleTimeout());
    }

    /**
     * Host settings that hold this gateway back, each with the command that fixes it, read afresh
     * (an operator's fix shows at once); empty when none. Today one: the Unix socket's send buffer
     * ({@link UnixSendBuffer}), which matters only with a Unix listener.
     */
    public String hostTuning() {
        return unixPath == null ? "" : UnixSendBuffer.hint(UnixSendBuffer.WMEM_DEFAULT).orElse("");
    }

    /** The bound TCP address (the real port when configured with 0), or null. */
    public InetSocketAddress tcpAddress() {
        return tcpAddress;
    }

    public Path unixSocket() {
        return unixPath;
    }

    public NbdServerStats stats() {
        return stats;
    }

    public int connectionCount() {
        return connections.size();
    }

    /**
     * Ends every connection on {@code device}: requests in flight still get their replies, later
     * ones NBD_ESHUTDOWN until the client disconnects (or the drain timeout closes it). Call
     * after the lookup stopped returning the device.
     */
    public void exportRemoved(BlockDevice device) {
        for (NbdConnection c : connections) {
            if (c.device() == device) {
                LOG.info("NBD export gone: ending {}", c);
                c.deviceGone();
            }
        }
    }

    private void startAcceptor(ServerSocketChannel listener, String kind, TlsPolicy tls) {
        Thread t = new Thread(() -> accept(listener, kind, tls), "nbd-accept-" + kind);
        t.setDaemon(true);
        acceptors.add(t);
        t.start();
    }

    private void accept(ServerSocketChannel listener, String kind, TlsPolicy tls) {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // Transient (EMFILE...): keep the listener, but do not spin on the error.
                LOG.warn("NBD accept on {} failed: {}", kind, e.toString());
                java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
                continue;
            }
            String peer;
            try {
                if (ch.getRemoteAddress() instanceof InetSocketAddress) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
                peer = ch.getRemoteAddress() instanceof InetSocketAddress a
                        ? a.getAddress().getHostAddress() + ":" + a.getPort() : "unix";
            } catch (IOException e) {
                closeQuietly(ch);
                continue;
            }
            if (connections.size() >= config.maxConnections()) {
                stats.refused.increment();
                LOG.warn("NBD client {} refused: {} connections already", peer, connections.size());
                closeQuietly(ch);
                continue;
            }
            stats.connections.increment();
            NbdConnection c = new NbdConnection(ids.incrementAndGet(), ch, peer, exports, pool, config, timer, nanoTime, tls,
                    stats, connections::remove, polls);
            connections.add(c);
            if (closed) {
                connections.remove(c);
                closeQuietly(ch);
                return;
            }
            c.start();
        }
    }

    @Override
    public void close() {
        closed = true;
        for (ServerSocketChannel l : listeners) {
            closeQuietly(l);
        }
        for (Thread t : acceptors) {
            join(t);
        }
        for (NbdConnection c : connections) {
            c.shutdown();
        }
        for (NbdConnection c : connections) {
            try {
                c.join(config.drainTimeout().toMillis() + 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (ownTimer) {
            timer.shutdownNow();
            try {
                timer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (unixPath != null) {
            try {
                Files.deleteIfExists(unixPath);
            } catch (IOException e) {
                LOG.warn("cannot remove NBD socket {}: {}", unixPath, e.toString());
            }
        }
    }

    private static void join(Thread t) {
        try {
            t.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A socket file left by a crashed run would make bind fail; anything else is not ours to delete. */
    private static void removeStaleSocket(Path p) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Object mode = Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (mode instanceof Integer m && (m & S_IFMT) == S_IFSOCK) {
            Files.delete(p);
        } else {
            throw new IOException(p + " exists and is not a socket");
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.debug("close: {}", e.toString());
        }
    }
}
