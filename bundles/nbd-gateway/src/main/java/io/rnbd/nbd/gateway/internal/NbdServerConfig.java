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
 * @param handshakeTimeout a client that has not finished the handshake by then is dropped
 * @param drainTimeout     how long a closing connection waits for its requests to complete
 */
public record NbdServerConfig(InetSocketAddress tcp, Path unixSocket, int maxConnections, int maxInflight,
                              long maxInflightBytes, Duration handshakeTimeout, Duration drainTimeout) {
    public static final int DEFAULT_MAX_CONNECTIONS = 128;
    public static final int DEFAULT_MAX_INFLIGHT = 256;
    public static final long DEFAULT_MAX_INFLIGHT_BYTES = 64L * 1024 * 1024;
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);

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
    }

    public static NbdServerConfig of(InetSocketAddress tcp, Path unixSocket) {
        return new NbdServerConfig(tcp, unixSocket, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_INFLIGHT,
                DEFAULT_MAX_INFLIGHT_BYTES, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_DRAIN_TIMEOUT);
    }

    public NbdServerConfig withMaxConnections(int max) {
        return new NbdServerConfig(tcp, unixSocket, max, maxInflight, maxInflightBytes, handshakeTimeout,
                drainTimeout);
    }
}
