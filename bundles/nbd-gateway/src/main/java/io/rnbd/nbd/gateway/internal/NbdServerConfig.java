package io.rnbd.nbd.gateway.internal;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Listener and limits of an {@link NbdServer}.
 *
 * @param tcp              TCP address to listen on, or null for none (port 0 = any free port)
 * @param unixSocket       Unix domain socket path, or null for none
 * @param maxConnections   connections beyond this are closed at once (each costs two threads)
 * @param maxInflight      requests in flight per connection before the server stops reading
 * @param maxInflightBytes payload bytes in flight per connection before the server stops reading
 * @param handshakeTimeout a client that has not finished the handshake (TLS included) by then is dropped
 * @param drainTimeout     how long a closing connection waits for its requests to complete
 * @param idleTimeout      a negotiated connection with nothing in flight that sends no request for
 *                         this long is closed; {@link Duration#ZERO} = never
 * @param tls              STARTTLS policy of the TCP listener
 * @param pollUsec         the longest a connection's reader busy-polls its socket for the next request
 *                         before it sleeps (0-1000; 0 = never), as the soft RDMA devices' poll.usec: the
 *                         window adapts (it opens while requests keep coming soon after the reader went
 *                         idle, so an idle connection never polls), and a poll begins only with few
 *                         requests in flight and a CPU spare. At depth 1 the next request comes right
 *                         after the reply, and a sleeping reader's wakeup is most of a round trip on a VM
 */
public record NbdServerConfig(InetSocketAddress tcp, Path unixSocket, int maxConnections, int maxInflight,
                              long maxInflightBytes, Duration handshakeTimeout, Duration drainTimeout,
                              Duration idleTimeout, TlsPolicy tls, int pollUsec) {
    public static final int MAX_POLL_USEC = 1000;
    /** The default poll.usec: covers a depth-1 round trip through the gateway on a 2-vCPU VM (docs/perf.md §6). */
    public static final int DEFAULT_POLL_USEC = 100;
    public static final int DEFAULT_MAX_CONNECTIONS = 128;
    public static final int DEFAULT_MAX_INFLIGHT = 256;
    public static final long DEFAULT_MAX_INFLIGHT_BYTES = 64L * 1024 * 1024;
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Long enough for a client that merely pauses (a mounted but quiet file system through
     * nbd-client, a VM disk between bursts), short enough that 128 abandoned connections do
     * not keep everyone else out for hours.
     */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(600);

    public NbdServerConfig {
        if (tcp == null && unixSocket == null) {
            throw new IllegalArgumentException("neither a TCP address nor a Unix socket to listen on");
        }
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be at least 1, not " + maxConnections);
        }
        if (maxInflight < 1) {
            throw new IllegalArgumentException("maxInflight must be at least 1, not " + maxInflight);
        }
        if (maxInflightBytes < 32L * 1024 * 1024) {
            throw new IllegalArgumentException("maxInflightBytes must hold one 32 MiB request");
        }
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero() || drainTimeout.isNegative()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
        if (idleTimeout == null || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("idle timeout must be positive, or zero for none");
        }
        if (tls == null) {
            tls = TlsPolicy.OFF;
        }
        if (pollUsec < 0 || pollUsec > MAX_POLL_USEC) {
            throw new IllegalArgumentException("poll.usec must be 0-" + MAX_POLL_USEC + ", not " + pollUsec);
        }
        // NBD itself has no authentication and no privacy: off loopback, only TLS provides either.
        if (tcp != null && !tcp.getAddress().isLoopbackAddress() && tls.mode() != TlsPolicy.Mode.REQUIRE) {
            throw new IllegalArgumentException("refusing to listen on " + tcp.getAddress().getHostAddress()
                    + ", beyond loopback, without tls=require: NBD has no authentication or encryption of its own"
                    + " (configure tls=require with tls.certificates or tls.keystore, or listen on 127.0.0.1)");
        }
    }

    public static NbdServerConfig of(InetSocketAddress tcp, Path unixSocket) {
        return new NbdServerConfig(tcp, unixSocket, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_INFLIGHT,
                DEFAULT_MAX_INFLIGHT_BYTES, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_DRAIN_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
                TlsPolicy.OFF, DEFAULT_POLL_USEC);
    }

    public NbdServerConfig withMaxConnections(int max) {
        return new NbdServerConfig(tcp, unixSocket, max, maxInflight, maxInflightBytes, handshakeTimeout,
                drainTimeout, idleTimeout, tls, pollUsec);
    }

    public NbdServerConfig withTimeouts(Duration handshake, Duration idle) {
        return new NbdServerConfig(tcp, unixSocket, maxConnections, maxInflight, maxInflightBytes, handshake,
                drainTimeout, idle, tls, pollUsec);
    }

    public NbdServerConfig withTls(TlsPolicy policy) {
        return new NbdServerConfig(tcp, unixSocket, maxConnections, maxInflight, maxInflightBytes, handshakeTimeout,
                drainTimeout, idleTimeout, policy, pollUsec);
    }

    public NbdServerConfig withPollUsec(int usec) {
        return new NbdServerConfig(tcp, unixSocket, maxConnections, maxInflight, maxInflightBytes, handshakeTimeout,
                drainTimeout, idleTimeout, tls, usec);
    }
}
