package io.rnbd.itests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Free TCP ports for the tests' servers, never the same one twice in this JVM. A port is free
 * when asked for and taken only later, when the server that was given it starts; the kernel may
 * hand the same port to the next bind(0) meanwhile. Seen in CI: RbdHaIT's client gateway and a
 * server's gateway were given one port, the client's could not listen, and the test's NBD client
 * reached the server's gateway ("no export named rnbd0") for its five minutes.
 */
public final class Ports {
    private static final Set<Integer> GIVEN = new HashSet<>();

    private Ports() {
    }

    /** A port free now and not handed out before by this class. */
    public static synchronized int free() {
        for (int tries = 0; tries < 100; tries++) {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (GIVEN.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no port not handed out before in 100 tries");
    }
}
