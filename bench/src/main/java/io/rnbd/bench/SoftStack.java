package io.rnbd.bench;

import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.server.internal.ServerConfig;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;

/**
 * A {@link DeviceStack} over two soft devices on loopback that it opens and closes itself, in
 * one of two topologies ({@code -Drnbd.bench.topology}):
 * <ul>
 * <li>{@code split} (the default, the primary comparison's): a server device (127.0.0.1) and a
 * client device (127.0.0.2), one path between them, as two machines would have;</li>
 * <li>{@code profile}: the appliance's default profile, soft0 (127.0.0.1) and soft1
 * (127.0.0.2), the session's two paths 127.0.0.1@127.0.0.1 and 127.0.0.2@127.0.0.2, so each
 * device carries both ends of its path, and min-inflight spreads IO over the two; both
 * devices poll as {@code -Drnbd.bench.poll.usec} says (default: the devices' default).</li>
 * </ul>
 */
final class SoftStack implements AutoCloseable {
    static final String SESSION = "bench";
    /**
     * IO threads per soft device, as the device configuration's io.threads: client side
     * (-Drnbd.bench.io.threads), server side (-Drnbd.bench.server.io.threads, default the same).
     */
    static final int IO_THREADS = Integer.getInteger("rnbd.bench.io.threads", 1);
    static final int SERVER_IO_THREADS = Integer.getInteger("rnbd.bench.server.io.threads", IO_THREADS);
    /**
     * The devices' poll.usec: client side (-Drnbd.bench.poll.usec), server side
     * (-Drnbd.bench.server.poll.usec); both default to what a device gets by default.
     */
    static final int POLL_USEC = Integer.getInteger("rnbd.bench.poll.usec", SoftDevice.DEFAULT_POLL_USEC);
    static final int SERVER_POLL_USEC = Integer.getInteger("rnbd.bench.server.poll.usec", SoftDevice.DEFAULT_POLL_USEC);

    final SoftDevice serverDev;
    final SoftDevice clientDev;
    final DeviceStack stack;
    final ClientSession session;

    /** {@code split} or {@code profile}: see the class comment. */
    static final String TOPOLOGY = System.getProperty("rnbd.bench.topology", "split");

    SoftStack(ServerConfig cfg, RtrsServerOps ops) throws Exception {
        boolean profile = switch (TOPOLOGY) {
            case "split" -> false;
            case "profile" -> true;
            default -> throw new IllegalArgumentException("rnbd.bench.topology must be split or profile: " + TOPOLOGY);
        };
        serverDev = new SoftDevice(profile ? "soft0" : "bench-srv", InetAddress.getByName("127.0.0.1"),
                profile ? IO_THREADS : SERVER_IO_THREADS, profile ? POLL_USEC : SERVER_POLL_USEC);
        clientDev = new SoftDevice(profile ? "soft1" : "bench-clt", InetAddress.getByName("127.0.0.2"), IO_THREADS,
                POLL_USEC);
        try {
            stack = profile
                    ? new DeviceStack(SESSION, cfg, ops, List.of(serverDev, clientDev), List.of(serverDev, clientDev),
                            Duration.ofSeconds(20))
                    : new DeviceStack(SESSION, cfg, ops, serverDev, clientDev, Duration.ofSeconds(20));
        } catch (Exception | Error e) {
            clientDev.close();
            serverDev.close();
            throw e;
        }
        session = stack.session;
    }

    @Override
    public void close() throws InterruptedException {
        stack.close();
        clientDev.close();
        serverDev.close();
    }
}
