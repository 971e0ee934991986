package io.rnbd.bench;

import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.client.ClientSession;
import io.rnbd.rtrs.server.ServerConfig;
import java.net.InetAddress;
import java.time.Duration;

/**
 * A {@link DeviceStack} over two soft devices on loopback (server 127.0.0.1, client
 * 127.0.0.2) that it opens and closes itself.
 */
final class SoftStack implements AutoCloseable {
    static final String SESSION = "bench";
    /**
     * IO threads per soft device, as the device configuration's io.threads: client side
     * (-Drnbd.bench.io.threads), server side (-Drnbd.bench.server.io.threads, default the same).
     */
    static final int IO_THREADS = Integer.getInteger("rnbd.bench.io.threads", 1);
    static final int SERVER_IO_THREADS = Integer.getInteger("rnbd.bench.server.io.threads", IO_THREADS);
    /** The devices' poll.usec: client side (-Drnbd.bench.poll.usec), server side (-Drnbd.bench.server.poll.usec). */
    static final int POLL_USEC = Integer.getInteger("rnbd.bench.poll.usec", 0);
    static final int SERVER_POLL_USEC = Integer.getInteger("rnbd.bench.server.poll.usec", 0);

    final SoftDevice serverDev;
    final SoftDevice clientDev;
    final DeviceStack stack;
    final ClientSession session;

    SoftStack(ServerConfig cfg, RtrsServerOps ops) throws Exception {
        serverDev = new SoftDevice("bench-srv", InetAddress.getByName("127.0.0.1"), SERVER_IO_THREADS, SERVER_POLL_USEC);
        clientDev = new SoftDevice("bench-clt", InetAddress.getByName("127.0.0.2"), IO_THREADS, POLL_USEC);
        try {
            stack = new DeviceStack(SESSION, cfg, ops, serverDev, clientDev, Duration.ofSeconds(20));
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
