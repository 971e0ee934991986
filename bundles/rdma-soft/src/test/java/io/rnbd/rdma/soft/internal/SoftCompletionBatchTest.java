package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CompletionBatch;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.testkit.rdma.Endpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The IO thread is a completion thread (rdma-api's {@code CompletionThread}) and opens its
 * {@link CompletionBatch} around the callbacks one ready channel brought: what they defer runs
 * once, after the last of them, on the IO thread, with the batch closed. The NBD gateway's
 * one write per burst of replies rests on this.
 */
class SoftCompletionBatchTest {
    /**
     * Deterministic: a pipe as the reactor's channel, whose bytes (written at once, so read at
     * once) each queue one callback, as a QP's frames queue completions.
     */
    @Test
    @Timeout(60)
    void theCallbacksOfOneReadyChannelAreOnePassAndItsDeferredWorkRunsOnceAtItsEnd() throws Exception {
        LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        Runnable end = () -> events.add(CompletionBatch.ofCurrentThread().open() ? "end, batch still open" : "end");
        SoftReactor reactor = new SoftReactor("batch", SoftDevice.adaptivePoll(0), r -> { }, r -> { });
        Pipe pipe = Pipe.open();
        try {
            reactor.start();
            pipe.source().configureBlocking(false);
            SoftReactor.Channel channel = new SoftReactor.Channel() {
                private final ByteBuffer in = ByteBuffer.allocate(64);

                @Override
                public void onReady(SelectionKey key) {
                    in.clear();
                    try {
                        pipe.source().read(in);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    for (int i = 0; i < in.position(); i++) {
                        byte b = in.get(i);
                        reactor.callback(() -> {
                            CompletionBatch batch = CompletionBatch.ofCurrentThread();
                            events.add("c" + b + (batch.open() ? "" : " outside a batch"));
                            batch.defer(end);
                            if (b == 9) {
                                batch.defer(() -> {
                                    throw new IllegalStateException("deferred work that fails, on purpose");
                                });
                            }
                        });
                    }
                }

                @Override
                public void failed(RuntimeException e) {
                    events.add("failed: " + e);
                }
            };
            reactor.executeAndWait(() -> {
                try {
                    pipe.source().register(reactor.selector(), SelectionKey.OP_READ, channel);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });

            pipe.sink().write(ByteBuffer.wrap(new byte[] {0, 1, 2}));
            assertEquals(List.of("c0", "c1", "c2", "end"), take(events, 4));
            pipe.sink().write(ByteBuffer.wrap(new byte[] {9, 4}));
            assertEquals(List.of("c9", "c4", "end"), take(events, 3), "a pass whose deferred work partly fails");
            pipe.sink().write(ByteBuffer.wrap(new byte[] {5}));
            assertEquals(List.of("c5", "end"), take(events, 2), "the reactor serves on after a failed one");

            // work outside a pass (a task from another thread) is in no batch: it runs at once
            reactor.executeAndWait(() -> {
                CompletionBatch.ofCurrentThread().defer(() -> events.add("at once"));
                events.add("after");
            });
            assertEquals(List.of("at once", "after"), take(events, 2));
            assertEquals(null, events.poll(100, TimeUnit.MILLISECONDS), "nothing more");
        } finally {
            reactor.stop();
            pipe.sink().close();
            pipe.source().close();
        }
    }

    /**
     * Through the real queue pairs: every RECV completion a device delivers is inside its IO
     * thread's open batch, and the work it defers runs once per pass, after that pass's last
     * completion (never with nothing new to do). How many completions share a pass depends on
     * how TCP delivers the chain; the previous test pins that down.
     */
    @Test
    @Timeout(60)
    void everyCompletionIsDeliveredInsideTheIoThreadsOpenBatch() throws Exception {
        int total = 64;
        try (SoftDevice server = new SoftDevice("bsrv", InetAddress.getByName("127.0.0.1"));
                SoftDevice client = new SoftDevice("bclt", InetAddress.getByName("127.0.0.2"))) {
            ProtectionDomain spd = server.allocPd();
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion slots = spd.register(ByteBuffer.allocateDirect(total * 8), Access.all());
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            List<Integer> passes = new ArrayList<>(); // IO thread only, read after `received`
            AtomicInteger pending = new AtomicInteger();
            CountDownLatch received = new CountDownLatch(total);
            Runnable endOfPass = () -> {
                int n = pending.getAndSet(0);
                if (n == 0) {
                    failures.add("deferred work ran twice in one pass");
                }
                if (CompletionBatch.ofCurrentThread().open()) {
                    failures.add("deferred work ran before its batch closed");
                }
                passes.add(n);
                for (int i = 0; i < n; i++) {
                    received.countDown();
                }
            };
            CompletionHandler onRecv = (qp, wc) -> {
                if (!wc.ok() || wc.opcode() != WcOpcode.RECV) {
                    failures.add("unexpected " + wc);
                    return;
                }
                CompletionBatch batch = CompletionBatch.ofCurrentThread();
                if (!batch.open() && failures.size() < 3) {
                    failures.add("completion " + wc.wrId() + " outside an open batch on " + Thread.currentThread().getName());
                }
                pending.incrementAndGet();
                batch.defer(endOfPass);
            };
            Endpoint serverEvents = new Endpoint("server");
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            CmListener listener = server.listen(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), req -> {
                try {
                    QueuePair qp = req.accept(new QpInit(spd, 16, total, 1, onRecv), serverEvents);
                    for (int k = 0; k < total; k++) {
                        qp.postRecv(new RecvWr(k, List.of(new Sge(slots, k * 8, 8))));
                    }
                    accepted.complete(qp);
                } catch (RdmaException e) {
                    accepted.completeExceptionally(e);
                }
            });
            Endpoint clientEnd = new Endpoint("client");
            MemoryRegion source = cpd.register(ByteBuffer.allocateDirect(8), Access.all());
            QueuePair cqp = client.connect(listener.localAddress(), new QpInit(cpd, total, 16, 1, clientEnd), null,
                    clientEnd);
            clientEnd.nextEvent(CmEvent.Type.ESTABLISHED);
            QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);
            List<SendWr> chain = new ArrayList<>();
            for (int k = 0; k < total; k++) {
                chain.add(SendWr.send(k, List.of(new Sge(source, 0, 8))));
            }
            cqp.postSend(chain.subList(0, total / 2));
            cqp.postSend(chain.subList(total / 2, total));
            assertTrue(received.await(30, TimeUnit.SECONDS), "received in passes: " + (total - received.getCount()));
            assertEquals(List.of(), List.copyOf(failures), "completions per pass: " + passes);
            sqp.close();
            cqp.close();
        }
    }

    private static List<String> take(LinkedBlockingQueue<String> events, int n) throws InterruptedException {
        List<String> got = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String e = events.poll(10, TimeUnit.SECONDS);
            if (e == null) {
                break;
            }
            got.add(e);
        }
        return got;
    }
}
