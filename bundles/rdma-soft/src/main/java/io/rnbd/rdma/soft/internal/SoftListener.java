package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequestHandler;
import io.rnbd.rdma.api.RdmaDevice;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A listening CM id: accepts TCP connections, and the device's connections to itself on a Unix
 * socket beside the port ({@link SoftLoopback}), and turns each HELLO into a connect request.
 */
final class SoftListener implements CmListener, SoftReactor.Channel {
    private static final Logger LOG = LoggerFactory.getLogger(SoftListener.class);

    private final SoftDevice device;
    private final ServerSocketChannel server;
    /** The same port for connections from this device, or null (they then come over TCP). */
    private final ServerSocketChannel loopback;
    private final ConnectRequestHandler handler;
    private final InetSocketAddress local;
    private SelectionKey key;
    private SelectionKey loopbackKey;
    private volatile boolean closed;

    SoftListener(SoftDevice device, ServerSocketChannel server, InetSocketAddress local, ServerSocketChannel loopback,
                 ConnectRequestHandler handler) {
        this.device = device;
        this.server = server;
        this.local = local;
        this.loopback = loopback;
        this.handler = handler;
    }

    ConnectRequestHandler handler() {
        return handler;
    }

    boolean closed() {
        return closed;
    }

    void register() {
        try {
            key = server.register(device.reactor().selector(), SelectionKey.OP_ACCEPT, this);
            if (loopback != null) {
                loopbackKey = loopback.register(device.reactor().selector(), SelectionKey.OP_ACCEPT, this);
            }
        } catch (ClosedChannelException e) {
            closeNow();
        }
    }

    @Override
    public void onReady(SelectionKey k) {
        ServerSocketChannel from = (ServerSocketChannel) k.channel();
        boolean tcp = from == server;
        for (int i = 0; i < 64 && !closed; i++) {
            SocketChannel ch;
            try {
                ch = from.accept();
            } catch (IOException e) {
                LOG.warn("{}: accept failed", local, e);
                return;
            }
            if (ch == null) {
                return;
            }
            InetAddress source;
            try {
                // a Unix socket's peer is this device: only its user may enter the directory
                source = tcp ? ((InetSocketAddress) ch.getRemoteAddress()).getAddress() : device.address();
            } catch (IOException | RuntimeException gone) {
                SoftDevice.closeQuietly(ch);
                continue;
            }
            // the HELLO deadline runs from the accept, and is fixed before the connection counts
            // as half-open: whoever sees it counted sees its deadline set
            long helloDeadline = device.nanos() + TimeUnit.MILLISECONDS.toNanos(device.handshake().timeoutMs());
            if (!device.handshakes().enter(source)) {
                SoftDevice.closeQuietly(ch);
                continue;
            }
            try {
                ch.configureBlocking(false);
                if (tcp) {
                    SoftDevice.tune(ch);
                }
                SoftQp qp = SoftQp.passive(device, device.nextReactor(), ch, this, helloDeadline);
                device.adopt(qp);
                qp.reactor().execute(() -> registerOnItsThread(qp, ch));
            } catch (IOException e) {
                LOG.warn("{}: cannot set up accepted connection", local, e);
                device.handshakes().left(source);
                SoftDevice.closeQuietly(ch);
            }
        }
    }

    private void registerOnItsThread(SoftQp qp, SocketChannel ch) {
        try {
            qp.cm.registerPassive();
        } catch (IOException e) {
            LOG.warn("{}: cannot set up accepted connection", local, e);
            device.forget(qp);
            SoftDevice.closeQuietly(ch);
        }
    }

    @Override
    public void failed(RuntimeException e) {
        // accepting is stateless: the next readiness tries again
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        device.reactor().executeAndWait(this::closeNow);
        // the reactor may already be gone with the device
        closeNow();
    }

    /** IO thread (or after the reactor stopped): stop accepting and free the port at once. */
    void closeNow() {
        if (closed) {
            return;
        }
        closed = true;
        if (key != null) {
            key.cancel();
        }
        if (loopbackKey != null) {
            loopbackKey.cancel();
        }
        SoftDevice.closeQuietly(server);
        if (loopback != null) {
            SoftDevice.closeQuietly(loopback);
            device.loopback().unbind(local.getPort());
        }
        device.reactor().flushCancelled();
        device.forget(this);
    }
}
