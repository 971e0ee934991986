package io.rnbd.itests;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.rnbd.common.Errno;
import io.rnbd.nbd.client.NbdClient;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;

/**
 * An NBD export seen as an application sees it through a client that reconnects, as qemu's
 * NBD client does with {@code reconnect-delay} and Linux's nbd with a dead-connection timeout:
 * a request whose connection is lost (the gateway's bundle stopped or updated: it answers what
 * it read, then closes) is sent again on a new connection, for up to {@code reconnectWithinMs}.
 * Safe for {@link VerifiedIo}, whose lanes have one request each in flight on blocks of their
 * own, so a request sent twice writes the same bytes. Each call completes before it returns.
 */
final class ReconnectingNbd implements BlockDevice {
    private final SocketAddress address;
    private final String export;
    private final long reconnectWithinMs;
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong resent = new AtomicLong();
    private volatile NbdClient client;

    ReconnectingNbd(SocketAddress address, String export, long reconnectWithinMs) throws IOException {
        this.address = address;
        this.export = export;
        this.reconnectWithinMs = reconnectWithinMs;
        this.client = NbdClient.connect(address, export);
    }

    /** New connections made after a loss. */
    long reconnects() {
        return reconnects.get();
    }

    /** Requests sent again after their connection was lost. */
    long resent() {
        return resent.get();
    }

    /** The connection now, or a new one if {@code lost} is still the current one. */
    private synchronized NbdClient reconnect(NbdClient lost, long deadline) throws IOException, InterruptedException {
        if (client != lost) {
            return client; // another lane reconnected already
        }
        lost.close();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try {
                client = NbdClient.connect(address, export);
                reconnects.incrementAndGet();
                return client;
            } catch (IOException e) {
                last = e; // the gateway is not listening (yet): stopped, or starting
                Thread.sleep(100); // polling a port: there is no event to wait on
            }
        }
        throw new IOException("no NBD connection to " + address + " within " + reconnectWithinMs + " ms", last);
    }

    private CompletableFuture<Void> run(Function<NbdClient, CompletableFuture<Void>> op) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(reconnectWithinMs);
        NbdClient c = client;
        while (true) {
            try {
                op.apply(c).get(VerifiedIo.OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                return CompletableFuture.completedFuture(null);
            } catch (ExecutionException e) {
                int errno = BlockIoException.errnoOf(e);
                if (errno != Errno.ECONNRESET && errno != Errno.ESHUTDOWN || System.nanoTime() > deadline) {
                    return CompletableFuture.failedFuture(e.getCause());
                }
                try {
                    c = reconnect(c, deadline);
                } catch (IOException | InterruptedException lost) {
                    return CompletableFuture.failedFuture(lost);
                }
                resent.incrementAndGet();
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }
    }

    @Override
    public long size() {
        return client.size();
    }

    @Override
    public Capabilities capabilities() {
        return client.capabilities();
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return run(c -> c.read(offset, dst.duplicate()));
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return run(c -> c.write(offset, src.duplicate(), fua));
    }

    @Override
    public CompletableFuture<Void> flush() {
        return run(NbdClient::flush);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return run(c -> c.trim(offset, length));
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return run(c -> c.writeZeroes(offset, length, fua));
    }

    @Override
    public void close() {
        client.close();
    }
}
