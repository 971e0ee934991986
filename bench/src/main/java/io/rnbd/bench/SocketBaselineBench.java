package io.rnbd.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The socket baseline for {@link SoftVerbsBench}: the same transfers over one blocking
 * {@link SocketChannel} pair on loopback (TCP_NODELAY, direct buffers), served by one thread.
 * "write": an 8-byte header and {@code size} bytes go out, a 1-byte acknowledgement comes back
 * once the server has placed them (what an RDMA_WRITE completion means). "read": an 8-byte
 * request goes out, {@code size} bytes come back. Same window sizes and modes as the soft
 * benchmark, so the two rows compare line by line.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class SocketBaselineBench {
    static final int WINDOW = SoftVerbsBench.WINDOW;

    @Param({"4096", "131072"})
    int size;

    private ServerSocketChannel listener;
    private SocketChannel client;
    private Thread server;
    private ByteBuffer out;
    private ByteBuffer in;
    private ByteBuffer headers;

    @Setup(Level.Trial)
    public void connect() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client = SocketChannel.open(listener.getLocalAddress());
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        SocketChannel peer = listener.accept();
        peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
        server = new Thread(() -> serve(peer, size), "socket-baseline-server");
        server.setDaemon(true);
        server.start();
        out = ByteBuffer.allocateDirect(WINDOW * (8 + size)).order(ByteOrder.LITTLE_ENDIAN);
        in = ByteBuffer.allocateDirect(WINDOW * size);
        headers = ByteBuffer.allocateDirect(WINDOW * 8).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void serve(SocketChannel ch, int size) {
        ByteBuffer hdr = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer data = ByteBuffer.allocateDirect(size);
        ByteBuffer ack = ByteBuffer.allocateDirect(1);
        try (ch) {
            while (true) {
                hdr.clear();
                if (!fill(ch, hdr)) {
                    return;
                }
                data.clear();
                if (hdr.getInt(0) == 1) {
                    if (!fill(ch, data)) {
                        return;
                    }
                    ack.clear();
                    ch.write(ack);
                } else {
                    while (data.hasRemaining()) {
                        ch.write(data);
                    }
                }
            }
        } catch (IOException e) {
            // the benchmark closed the socket
        }
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        client.close();
        listener.close();
        server.join(5000);
    }

    private void write(int n) throws IOException {
        out.clear();
        for (int i = 0; i < n; i++) {
            out.putInt(1).putInt(size);
            out.position(out.position() + size);
        }
        out.flip();
        while (out.hasRemaining()) {
            client.write(out);
        }
        in.clear().limit(n);
        fill(client, in);
    }

    private void read(int n) throws IOException {
        headers.clear();
        for (int i = 0; i < n; i++) {
            headers.putInt(2).putInt(size);
        }
        headers.flip();
        while (headers.hasRemaining()) {
            client.write(headers);
        }
        in.clear().limit(n * size);
        fill(client, in);
    }

    @Benchmark
    public void writeQd1() throws IOException {
        write(1);
    }

    @Benchmark
    public void readQd1() throws IOException {
        read(1);
    }

    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public void writeQd16() throws IOException {
        write(WINDOW);
    }

    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public void readQd16() throws IOException {
        read(WINDOW);
    }
}
