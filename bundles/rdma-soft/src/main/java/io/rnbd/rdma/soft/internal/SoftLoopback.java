package io.rnbd.rdma.soft.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device's connections to itself, as rxe's {@code rxe_loopback()}: rxe hands a packet whose
 * destination is its own device straight to its receive path instead of the network stack. Here a
 * connection whose destination is one of this device's own listeners goes over a Unix socket
 * beside the listener's TCP port: the same frames, the same socket channel to every part of the
 * queue pair, without TCP's per-segment work (a 4 KiB round trip on loopback: TCP 55 us, Unix
 * 37 us on the 2-vCPU development VM). The appliance's default profile has both ends of each path
 * on one device, so that is every path it makes to itself; a connection to another device, even
 * in the same process, stays TCP, as it would between two hosts.
 *
 * <p>The sockets live in a directory only this user may enter, made when the first listener
 * binds and removed when the device closes. When a socket cannot be bound (no writable
 * temporary directory, a path too long for a Unix address) the listener is TCP only and
 * connections to it go over TCP: slower, never broken.
 */
final class SoftLoopback {
    private static final Logger LOG = LoggerFactory.getLogger(SoftLoopback.class);
    /** sun_path holds 108 bytes with its NUL; stay clear of it. */
    static final int MAX_PATH = 100;

    private final String device;
    private final Path base;
    private final Map<Integer, Path> byPort = new ConcurrentHashMap<>();
    private final AtomicLong connects = new AtomicLong();
    private Path dir;
    private boolean warned;

    /** {@code base}: where the device's directory goes (null: {@code java.io.tmpdir}, else /tmp). */
    SoftLoopback(String device, Path base) {
        this.device = device;
        this.base = base;
    }

    /**
     * A Unix listener for TCP port {@code port} of this device, or null when none can be bound
     * (logged once per device; connections to the port then go over TCP).
     */
    synchronized ServerSocketChannel bind(int port) {
        ServerSocketChannel server = null;
        try {
            Path path = directory().resolve(Integer.toString(port));
            Files.deleteIfExists(path);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path), 1024);
            server.configureBlocking(false);
            byPort.put(port, path);
            return server;
        } catch (IOException | RuntimeException e) {
            SoftDevice.closeQuietly(server);
            if (!warned) {
                warned = true;
                LOG.info("{}: connections to itself go over TCP: no Unix socket for its listeners ({})",
                        device, e.toString());
            }
            return null;
        }
    }

    /** The listener of {@code port} closed: new connections to it are refused as over TCP. */
    void unbind(int port) {
        Path path = byPort.remove(port);
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOG.debug("{}: cannot remove {}", device, path, e);
            }
        }
    }

    /**
     * The Unix address to connect to for {@code destination}, when it is a listener of this device
     * on {@code own}; else null (TCP).
     */
    UnixDomainSocketAddress route(InetSocketAddress destination, InetAddress own) {
        if (!own.equals(destination.getAddress())) {
            return null;
        }
        Path path = byPort.get(destination.getPort());
        // removed under us (a cleaned temporary directory): the TCP port still listens
        if (path == null || !Files.exists(path)) {
            return null;
        }
        connects.incrementAndGet();
        return UnixDomainSocketAddress.of(path);
    }

    /** The socket of the listener on {@code port}, or null. */
    Path socket(int port) {
        return byPort.get(port);
    }

    /** Connects this device sent to itself over a Unix socket (counted when routed, so refused ones too). */
    long connects() {
        return connects.get();
    }

    /** The device closed (its listeners first): its directory goes. */
    synchronized void close() {
        for (Integer port : byPort.keySet()) {
            unbind(port);
        }
        if (dir != null) {
            try {
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                LOG.debug("{}: cannot remove {}", device, dir, e);
            }
            dir = null;
        }
    }

    /** A loopback connection's channel: a Unix socket, which (unlike TCP) has no Nagle to turn off. */
    static boolean isUnix(SocketChannel ch) {
        return !ch.supportedOptions().contains(StandardSocketOptions.TCP_NODELAY);
    }

    private Path directory() throws IOException {
        if (dir == null) {
            Path parent = base != null ? base : Path.of(System.getProperty("java.io.tmpdir", "/tmp"));
            // "/rnbd-soft-<random>/<port>": keep under sun_path's limit, else use /tmp
            if (parent.toAbsolutePath().toString().length() + 40 > MAX_PATH) {
                parent = Path.of("/tmp");
            }
            dir = Files.createTempDirectory(parent, "rnbd-soft-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        return dir;
    }
}
