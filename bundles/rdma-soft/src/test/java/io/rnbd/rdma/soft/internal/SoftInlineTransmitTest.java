package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.testkit.rdma.Endpoint;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends posted from other threads go out from the poster's own context when the send side
 * is idle, and through the IO thread otherwise. Both routes share one QP: whatever mix
 * the timing produces, every message must arrive exactly once and each poster's messages
 * in that poster's order (RC semantics), also when the IO thread posts at the same time.
 */
class SoftInlineTransmitTest {
    private static final int POSTERS = 4;
    private static final int PER_POSTER = 1500;
    /** Messages the IO thread posts itself, one from each of this many send completions. */
    private static final int FROM_IO_THREAD = 500;
    private static final int IO_TAG = 99;
    private static final int TOTAL = POSTERS * PER_POSTER + FROM_IO_THREAD;
    private static final int MSG = 8;

    @Test
    @Timeout(60)
    void concurrentPostersAndTheIoThreadKeepEachPostersOrder() throws Exception {
        try (SoftDevice server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
                SoftDevice client = new SoftDevice("clt", InetAddress.getByName("127.0.0.2"))) {
            ProtectionDomain spd = server.allocPd();
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion slots = spd.register(ByteBuffer.allocateDirect(TOTAL * MSG), Access.all());
            Endpoint serverEnd = new Endpoint("server");
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            CmListener listener = server.listen(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), req -> {
                try {
                    QueuePair qp = req.accept(new QpInit(spd, 16, TOTAL, 1, serverEnd), serverEnd);
                    // recvs are consumed in posting order: slot k holds the k-th message to arrive
                    for (int k = 0; k < TOTAL; k++) {
                        qp.postRecv(new RecvWr(k, List.of(new Sge(slots, k * MSG, MSG))));
                    }
                    accepted.complete(qp);
                } catch (RdmaException e) {
                    accepted.completeExceptionally(e);
                }
            });

            MemoryRegion ioThreadSource = cpd.register(ByteBuffer.allocateDirect(FROM_IO_THREAD * MSG), Access.all());
            AtomicInteger ioThreadPosted = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            CountDownLatch allSent = new CountDownLatch(TOTAL);
            Endpoint events = new Endpoint("client");
            CompletionHandler onSent = (qp, wc) -> {
                if (wc.status() != WcStatus.SUCCESS) {
                    failures.add("send " + wc.wrId() + ": " + wc.status());
                }
                // on the IO thread: post one more from here, interleaving with the posters
                int n = ioThreadPosted.getAndIncrement();
                if (n < FROM_IO_THREAD) {
                    ioThreadSource.buffer().putInt(n * MSG, IO_TAG).putInt(n * MSG + 4, n);
                    post(qp, SendWr.send(-1, List.of(new Sge(ioThreadSource, n * MSG, MSG))), failures);
                }
                allSent.countDown();
            };
            QueuePair cqp = client.connect(listener.localAddress(), new QpInit(cpd, TOTAL, 16, 1, onSent), null,
                    events);
            events.nextEvent(CmEvent.Type.ESTABLISHED);
            QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);

            List<Thread> posters = new ArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int t = 0; t < POSTERS; t++) {
                int tag = t;
                MemoryRegion source = cpd.register(ByteBuffer.allocateDirect(PER_POSTER * MSG), Access.all());
                Thread poster = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int seq = 0; seq < PER_POSTER; seq++) {
                        source.buffer().putInt(seq * MSG, tag).putInt(seq * MSG + 4, seq);
                        post(cqp, SendWr.send(seq, List.of(new Sge(source, seq * MSG, MSG))), failures);
                        if (seq % 64 == 0) {
                            Thread.yield(); // vary the mix of inline and queued transmits
                        }
                    }
                }, "poster-" + t);
                poster.start();
                posters.add(poster);
            }
            go.countDown();
            for (Thread poster : posters) {
                poster.join();
            }
            assertTrue(allSent.await(30, TimeUnit.SECONDS), "sends completed: " + (TOTAL - allSent.getCount()));
            assertEquals(List.of(), List.copyOf(failures));
            for (int k = 0; k < TOTAL; k++) {
                WorkCompletion wc = serverEnd.nextWc(WcStatus.SUCCESS);
                assertEquals(MSG, wc.byteLen());
            }

            int[] next = new int[IO_TAG + 1];
            for (int k = 0; k < TOTAL; k++) {
                int tag = slots.buffer().getInt(k * MSG);
                int seq = slots.buffer().getInt(k * MSG + 4);
                assertTrue(tag == IO_TAG || (tag >= 0 && tag < POSTERS), "message " + k + " has tag " + tag);
                assertEquals(next[tag], seq, "message " + k + " from poster " + tag);
                next[tag]++;
            }
            for (int t = 0; t < POSTERS; t++) {
                assertEquals(PER_POSTER, next[t], "messages from poster " + t);
            }
            assertEquals(FROM_IO_THREAD, next[IO_TAG], "messages from the IO thread");
            sqp.close();
            cqp.close();
        }
    }

    private static void post(QueuePair qp, SendWr wr, ConcurrentLinkedQueue<String> failures) {
        try {
            qp.postSend(wr);
        } catch (RdmaException e) {
            failures.add("post " + wr.wrId() + ": " + e.getMessage());
        }
    }
}
