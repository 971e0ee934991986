package io.rnbd.nbd.client;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.common.Errno;
import io.rnbd.nbd.proto.NbdErrors;
import io.rnbd.nbd.proto.NbdProtoException;
import io.rnbd.nbd.proto.Request;
import io.rnbd.nbd.proto.SimpleReply;
import io.rnbd.nbd.transport.ChannelInput;
import io.rnbd.nbd.transport.ChannelOutput;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.BlockSplit;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A block device on an NBD server. Requests are pipelined: any thread may submit, the request
 * is written at once (under a lock), or when the submitting thread's {@link #plug} closes,
 * and its future completes on the client's reader thread when the reply arrives, so
 * callbacks should be short. Simple replies only (no structured
 * replies are negotiated), NBD_OPT_GO with a block size request, NBD_OPT_EXPORT_NAME as a
 * fallback for old servers.
 */
public final class NbdClient implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(NbdClient.class);
    private static final int STAGING = 256 * 1024;
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1024 * 1024).asReadOnlyBuffer();

    private final SocketChannel ch;
    private final ChannelInput in;
    private final String exportName;
    private final long size;
    private final int transmissionFlags;
    private final int minBlock;
    private final int preferredBlock;
    private final int maxIo;
    private final Capabilities caps;
    private final Map<Long, Pending> inflight = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong();
    private final ReentrantLock sendLock = new ReentrantLock();
    /** The plug each submitting thread holds, if any: thread-confined. */
    private final ThreadLocal<ClientPlug> plugs = new ThreadLocal<>();
    private final ByteBuffer header = ByteBuffer.allocateDirect(Request.SIZE);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private final Thread reader;
    private volatile boolean closed;
    private volatile Throwable broken;

    private record Pending(int type, ByteBuffer dst, CompletableFuture<Void> future) {
    }

    private NbdClient(SocketChannel ch, ChannelInput in, String exportName, ClientHandshake.Result h) {
        this.ch = ch;
        this.in = in;
        this.exportName = exportName;
        this.size = h.size();
        this.transmissionFlags = h.transmissionFlags();
        // Without NBD_INFO_BLOCK_SIZE the spec's interoperable defaults apply: 512, 4096, 32 MiB.
        this.minBlock = Math.max(512, h.minimumBlock());
        this.preferredBlock = Math.max(minBlock, h.preferredBlock() == 0 ? 4096 : h.preferredBlock());
        long max = h.maximumBlock() == 0 ? MAX_PAYLOAD
                : Math.min(MAX_PAYLOAD, Integer.toUnsignedLong(h.maximumBlock()));
        this.maxIo = (int) Math.max(minBlock, max / minBlock * minBlock);
        this.caps = new Capabilities(!has(FLAG_READ_ONLY), has(FLAG_SEND_FLUSH), has(FLAG_SEND_FUA),
                has(FLAG_SEND_TRIM), has(FLAG_SEND_WRITE_ZEROES), has(FLAG_CAN_MULTI_CONN));
        this.reader = new Thread(this::readReplies, "nbd-client-" + exportName);
        reader.setDaemon(true);
        reader.start();
    }

    /** Connects to {@code nbd://host:port/exportName} over TCP or to a Unix socket. */
    public static NbdClient connect(SocketAddress address, String exportName) throws IOException {
        return connect(address, exportName, Duration.ofSeconds(10));
    }

    public static NbdClient connect(SocketAddress address, String exportName, Duration connectTimeout)
            throws IOException {
        SocketChannel ch;
        if (address instanceof UnixDomainSocketAddress) {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(address);
        } else if (address instanceof InetSocketAddress) {
            ch = SocketChannel.open();
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.socket().connect(address, (int) connectTimeout.toMillis());
        } else {
            throw new IllegalArgumentException("unsupported address " + address);
        }
        try {
            ChannelInput in = new ChannelInput(ch, STAGING);
            ClientHandshake.Result h = new ClientHandshake(ch, in).run(exportName);
            return new NbdClient(ch, in, exportName, h);
        } catch (NbdProtoException e) {
            ch.close();
            throw new BlockIoException(e.errno(), "NBD handshake with " + address + " failed: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Connects to an NBD URI: {@code nbd://host[:port]/export} or
     * {@code nbd+unix:///export?socket=/path} (the forms nbdinfo, nbdcopy and qemu accept).
     */
    public static NbdClient connect(String uri) throws IOException {
        java.net.URI u = java.net.URI.create(uri);
        String path = u.getPath() == null ? "" : u.getPath();
        String export = path.startsWith("/") ? path.substring(1) : path;
        if ("nbd".equals(u.getScheme())) {
            if (u.getHost() == null) {
                throw new IllegalArgumentException("no host in " + uri);
            }
            return connect(new InetSocketAddress(u.getHost(), u.getPort() < 0 ? DEFAULT_PORT : u.getPort()), export);
        }
        if ("nbd+unix".equals(u.getScheme())) {
            String q = u.getQuery() == null ? "" : u.getQuery();
            for (String kv : q.split("&")) {
                if (kv.startsWith("socket=")) {
                    return connect(UnixDomainSocketAddress.of(kv.substring("socket=".length())), export);
                }
            }
            throw new IllegalArgumentException("no socket= in " + uri);
        }
        throw new IllegalArgumentException("not an nbd:// or nbd+unix:// URI: " + uri);
    }

    /** The exports a server lists (NBD_OPT_LIST), by name. */
    public static List<String> list(SocketAddress address) throws IOException {
        SocketChannel ch = address instanceof UnixDomainSocketAddress
                ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        try (ch) {
            ch.connect(address);
            List<String> names = new ArrayList<>();
            for (var e : new ClientHandshake(ch, new ChannelInput(ch, 64 * 1024)).list()) {
                names.add(e.name());
            }
            return names;
        } catch (NbdProtoException e) {
            throw new BlockIoException(e.errno(), "NBD_OPT_LIST on " + address + " failed: " + e.getMessage(), e);
        }
    }

    public String exportName() {
        return exportName;
    }

    /** The transmission flags the server sent. */
    public int transmissionFlags() {
        return transmissionFlags;
    }

    public int inflight() {
        return inflight.size();
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int logicalBlockSize() {
        return minBlock;
    }

    @Override
    public int physicalBlockSize() {
        return preferredBlock;
    }

    @Override
    public int maxIoSize() {
        return maxIo;
    }

    @Override
    public Capabilities capabilities() {
        return caps;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        int len = dst.remaining();
        String bad = check(offset, len, false);
        if (bad != null) {
            return failed(Errno.EINVAL, bad);
        }
        return submit(CMD_READ, 0, offset, len, dst.slice());
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        if (!caps.write()) {
            return failed(Errno.EROFS, "read-only export");
        }
        int len = src.remaining();
        String bad = check(offset, len, false);
        if (bad != null) {
            return failed(Errno.EINVAL, bad);
        }
        return submit(CMD_WRITE, fua && caps.fua() ? CMD_FLAG_FUA : 0, offset, len, src.slice());
    }

    @Override
    public CompletableFuture<Void> flush() {
        if (!caps.flush()) {
            return failed(Errno.EOPNOTSUPP, "the server does not support flush");
        }
        return submit(CMD_FLUSH, 0, 0, 0, null);
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        if (!caps.write()) {
            return failed(Errno.EROFS, "read-only export");
        }
        if (!caps.trim()) {
            return failed(Errno.EOPNOTSUPP, "the server does not support trim");
        }
        String bad = check(offset, length, true);
        if (bad != null) {
            return failed(Errno.EINVAL, bad);
        }
        return submit(CMD_TRIM, 0, offset, length, null);
    }

    /** NO_HOLE only when the range must stay allocated: else the server may punch a hole. */
    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        if (!noUnmap && caps.write() && caps.zero() && check(offset, length, true) == null) {
            return submit(CMD_WRITE_ZEROES, fua && caps.fua() ? CMD_FLAG_FUA : 0, offset, length, null);
        }
        return writeZeroes(offset, length, fua);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        if (!caps.write()) {
            return failed(Errno.EROFS, "read-only export");
        }
        String bad = check(offset, length, true);
        if (bad != null) {
            return failed(Errno.EINVAL, bad);
        }
        int flags = fua && caps.fua() ? CMD_FLAG_FUA : 0;
        if (caps.zero()) {
            return submit(CMD_WRITE_ZEROES, flags | CMD_FLAG_NO_HOLE, offset, length, null);
        }
        return writeZeroesByWriting(offset, length, flags);
    }

    /** Servers without WRITE_ZEROES get zeros written, one chunk after the other. */
    private CompletableFuture<Void> writeZeroesByWriting(long offset, long length, int flags) {
        return BlockSplit.run(offset, length, Math.min(maxIo, ZEROES.capacity()), 1,
                (at, n, pos) -> submit(CMD_WRITE, flags, at, n, BlockSplit.slice(ZEROES, 0, n)));
    }

    private String check(long offset, long length, boolean anyLength) {
        if (offset < 0 || length < 0 || offset > size || length > size - offset) {
            return "range " + offset + "+" + length + " beyond the export's " + size + " bytes";
        }
        if (offset % minBlock != 0 || length % minBlock != 0) {
            return "range " + offset + "+" + length + " not aligned to " + minBlock + " bytes";
        }
        if (!anyLength && length > maxIo) {
            return length + " bytes exceed the maximum IO size " + maxIo;
        }
        if (length > 0xFFFF_FFFFL) {
            return length + " bytes do not fit an NBD request";
        }
        return null;
    }

    private boolean has(int flag) {
        return (transmissionFlags & flag) != 0;
    }

    private CompletableFuture<Void> submit(int type, int flags, long offset, long length, ByteBuffer data) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        if (closed || broken != null) {
            f.completeExceptionally(new BlockIoException(Errno.ESHUTDOWN, "NBD connection to '" + exportName
                    + "' is closed"));
            return f;
        }
        long handle = handles.incrementAndGet();
        inflight.put(handle, new Pending(type, type == CMD_READ ? data : null, f));
        ClientPlug plug = plugs.get();
        if (plug != null) {
            plug.add(new Request(flags, type, handle, offset, length), type == CMD_WRITE ? data : null);
            return f;
        }
        sendLock.lock();
        try {
            if (broken != null) {
                throw new IOException("connection broken");
            }
            header.clear();
            new Request(flags, type, handle, offset, length).encode(header);
            header.flip();
            if (type == CMD_WRITE && data != null && data.hasRemaining()) {
                gather[0] = header;
                gather[1] = data;
                ChannelOutput.writeFully(ch, gather, 2);
                gather[1] = null;
            } else {
                ChannelOutput.writeFully(ch, header);
            }
        } catch (IOException e) {
            fail(e);
        } finally {
            sendLock.unlock();
        }
        return f;
    }

    @Override
    public BlockPlug plug() {
        if (plugs.get() != null) {
            return BlockPlug.NONE;
        }
        ClientPlug p = new ClientPlug();
        plugs.set(p);
        return p;
    }

    /** One thread's held requests, written in one gathering write when it closes (as TCP_CORK would). */
    private final class ClientPlug implements BlockPlug {
        private final Thread owner = Thread.currentThread();
        private final List<ByteBuffer> out = new ArrayList<>();
        private boolean closed;

        void add(Request r, ByteBuffer data) {
            ByteBuffer h = ByteBuffer.allocate(Request.SIZE);
            r.encode(h);
            out.add(h.flip());
            if (data != null && data.hasRemaining()) {
                out.add(data);
            }
        }

        @Override
        public void close() {
            if (Thread.currentThread() != owner) {
                throw new IllegalStateException("a plug is closed by the thread that took it");
            }
            if (closed) {
                return;
            }
            closed = true;
            plugs.remove();
            if (out.isEmpty()) {
                return;
            }
            sendLock.lock();
            try {
                if (broken != null) {
                    throw new IOException("connection broken");
                }
                ChannelOutput.writeFully(ch, out.toArray(new ByteBuffer[0]), out.size());
            } catch (IOException e) {
                fail(e);
            } finally {
                sendLock.unlock();
            }
        }
    }

    private void readReplies() {
        try {
            while (true) {
                if (!in.await(SimpleReply.SIZE)) {
                    throw new IOException("NBD server closed the connection");
                }
                SimpleReply r = SimpleReply.decode(in.need(SimpleReply.SIZE));
                Pending p = inflight.remove(r.handle());
                if (p == null) {
                    throw new NbdProtoException(Errno.EPROTO, "reply for unknown handle " + r.handle());
                }
                if (r.error() != 0) {
                    int errno = NbdErrors.fromWire(r.error());
                    p.future().completeExceptionally(new BlockIoException(errno, "NBD server error "
                            + r.error() + " on '" + exportName + "'"));
                    continue;
                }
                if (p.type() == CMD_READ && p.dst() != null) {
                    in.readFully(p.dst());
                }
                p.future().complete(null);
            }
        } catch (IOException | NbdProtoException e) {
            if (!closed) {
                LOG.warn("NBD connection to '{}' lost: {}", exportName, e.getMessage());
            }
            fail(e);
        } catch (RuntimeException e) {
            LOG.warn("NBD client reader for '{}' failed", exportName, e);
            fail(e);
        }
    }

    private void fail(Throwable cause) {
        if (broken == null) {
            broken = cause;
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("close: {}", e.toString());
        }
        int errno = closed ? Errno.ESHUTDOWN : Errno.ECONNRESET;
        for (Long h : inflight.keySet()) {
            Pending p = inflight.remove(h);
            if (p != null) {
                p.future().completeExceptionally(new BlockIoException(errno, "NBD connection to '" + exportName
                        + "' lost", cause));
            }
        }
    }

    private static CompletableFuture<Void> failed(int errno, String message) {
        return CompletableFuture.failedFuture(new BlockIoException(errno, message));
    }

    /**
     * Waits (up to 10 s) for requests in flight, sends NBD_CMD_DISC and closes the connection;
     * what is still in flight then fails with ESHUTDOWN.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        CompletableFuture<?>[] pending = inflight.values().stream().map(Pending::future)
                .toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(pending).get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.debug("NBD close of '{}' with requests failed or in flight: {}", exportName, e.toString());
        }
        closed = true;
        sendLock.lock();
        try {
            if (broken == null) {
                header.clear();
                new Request(0, CMD_DISC, handles.incrementAndGet(), 0, 0).encode(header);
                header.flip();
                ChannelOutput.writeFully(ch, header);
                ch.shutdownOutput();
            }
        } catch (IOException e) {
            LOG.debug("NBD disconnect of '{}': {}", exportName, e.toString());
        } finally {
            sendLock.unlock();
        }
        try {
            reader.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        fail(new IOException("closed"));
        try {
            reader.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "NbdClient[" + exportName + ", " + size + " bytes]";
    }
}
