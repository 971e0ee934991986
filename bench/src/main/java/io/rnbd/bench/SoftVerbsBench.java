package io.rnbd.bench;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 * RDMA_WRITE and RDMA_READ between two soft devices on loopback (127.0.0.2 initiator,
 * 127.0.0.1 target), one QP. {@code *Qd1}: one request, wait for its completion (the
 * average time is the latency). {@code *Qd16}: a window of {@value #WINDOW} requests posted
 * back to back, then all completions awaited (time per op; bytes/s = size / time). Compare
 * with {@link SocketBaselineBench}, which does the same over a plain blocking socket.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class SoftVerbsBench {
    static final int WINDOW = 16;

    @Param({"4096", "131072"})
    int size;

    private SoftDevice target;
    private SoftDevice initiator;
    private CmListener listener;
    private QueuePair qp;
    private QueuePair targetQp;
    private MemoryRegion local;
    private MemoryRegion remote;
    private final Completions completions = new Completions();
    private long posted;
    private long wrId;

    @Setup(Level.Trial)
    public void connect() throws Exception {
        target = new SoftDevice("bench-t", InetAddress.getByName("127.0.0.1"));
        initiator = new SoftDevice("bench-i", InetAddress.getByName("127.0.0.2"));
        ProtectionDomain tpd = target.allocPd();
        ProtectionDomain ipd = initiator.allocPd();
        remote = tpd.register(ByteBuffer.allocateDirect(size * WINDOW), Access.all());
        local = ipd.register(ByteBuffer.allocateDirect(size * WINDOW), Access.all());
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        listener = target.listen(new InetSocketAddress(target.address(), 0), req -> {
            try {
                accepted.complete(req.accept(new QpInit(tpd, 4, 4, 1, (q, wc) -> { }), (q, e) -> { }));
            } catch (Exception e) {
                accepted.completeExceptionally(e);
            }
        });
        CompletableFuture<Void> established = new CompletableFuture<>();
        qp = initiator.connect(listener.localAddress(), new QpInit(ipd, 2 * WINDOW, 4, 1, this::onCompletion),
                new byte[0], (q, e) -> {
                    if (e.type() == CmEvent.Type.ESTABLISHED) {
                        established.complete(null);
                    } else {
                        established.completeExceptionally(new IllegalStateException(e.toString()));
                    }
                });
        targetQp = accepted.get(10, TimeUnit.SECONDS);
        established.get(10, TimeUnit.SECONDS);
    }

    private void onCompletion(QueuePair q, WorkCompletion wc) {
        if (wc.ok()) {
            completions.complete();
        } else {
            completions.fail("completion " + wc);
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        qp.close();
        targetQp.close();
        listener.close();
        initiator.close();
        target.close();
    }

    private void post(boolean write, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            int off = i * size;
            List<Sge> sgl = List.of(new Sge(local, off, size));
            qp.postSend(write ? SendWr.write(++wrId, sgl, remote.address() + off, remote.rkey())
                    : SendWr.read(++wrId, sgl, remote.address() + off, remote.rkey()));
        }
        posted += n;
        completions.await(posted);
    }

    @Benchmark
    public void writeQd1() throws Exception {
        post(true, 1);
    }

    @Benchmark
    public void readQd1() throws Exception {
        post(false, 1);
    }

    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public void writeQd16() throws Exception {
        post(true, WINDOW);
    }

    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public void readQd16() throws Exception {
        post(false, WINDOW);
    }
}
