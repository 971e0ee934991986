package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.MsgType;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rtrs.api.IoDone;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The RNBD server restarted and forgot the device's id while requests were out: their ENXIO
 * answers come on the threads of several paths at once. One of them re-opens the export, the
 * others wait for the new id or go with it; none may fail (SwapIT's rnbd-server swap saw one
 * write fail with ENXIO when the check and the re-open were two steps).
 */
class ConcurrentEnxioTest {
    private static final int ROUNDS = 5000;
    /** Requests out at the restart, answered ENXIO on as many threads (paths) at once. */
    private static final int OUT = 4;

    /** A server that answers OPEN with its current id, IO for that id with 0, other ids with ENXIO; or holds IO. */
    private static final class RestartingServer extends ConnectedSession {
        volatile int id = 1;
        volatile boolean holdIo;
        final ConcurrentLinkedQueue<IoDone> held = new ConcurrentLinkedQueue<>();

        RestartingServer() {
            super(128 * 1024);
        }

        @Override
        void answer(RnbdMsg m, ByteBuffer payload, ByteBuffer dst, IoDone done) {
            if (m.type() == MsgType.OPEN) {
                dst.duplicate().put(new OpenRsp(id, 2048, 256, 0, 0, 512, 0, 4096, 512, 128, false,
                        OpenRsp.CACHE_FUA).toBuffer());
                done.done(0);
            } else if (m instanceof Io io) {
                if (holdIo) {
                    held.add(done);
                } else {
                    done.done(io.deviceId() == id ? 0 : Errno.ENXIO);
                }
            }
        }
    }

    /**
     * The one decision, state by state: a piece of the current id of a MAPPED device starts
     * the remap; one of an old id, or one answered while the remap is out or the session is
     * down, goes again; anything else fails.
     */
    @Test
    void whatAnEnxioLeadsTo() throws Exception {
        RestartingServer server = new RestartingServer();
        RnbdClient client = new RnbdClient(DevicePublisher.NONE);
        client.sessionAdded(server);
        RnbdClientDevice d = (RnbdClientDevice) client.map("rnbd0", "s1", "disk", AccessMode.RW)
                .get(10, TimeUnit.SECONDS);
        try {
            server.holdIo = true;
            CompletableFuture<Void> w = d.write(0, ByteBuffer.allocate(4096), false);
            IoDone first = server.held.poll();
            Piece p = (Piece) first;
            assertEquals(1, p.sentWith);
            p.sentWith = 7;
            assertEquals(RnbdClientDevice.AfterEnxio.RESEND, d.onEnxio(p), "an old id: the device has a new one");
            p.sentWith = 1;
            server.id = 2;
            server.holdIo = false;
            assertEquals(RnbdClientDevice.AfterEnxio.REOPENED, d.onEnxio(p), "the current id: the server forgot it");
            w.get(10, TimeUnit.SECONDS);
            assertEquals(2, p.sentWith, "held, then sent with the id of the new OPEN");
            client.unmap("rnbd0", true);
            assertEquals(RnbdClientDevice.AfterEnxio.FAIL, d.onEnxio(p), "unmapped");
        } finally {
            client.close();
        }
    }

    @Test
    void enxioAnsweredOnSeveralThreadsAtOnceFailsNoRequest() throws Exception {
        RestartingServer server = new RestartingServer();
        RnbdClient client = new RnbdClient(DevicePublisher.NONE);
        client.sessionAdded(server);
        RemoteBlockDevice d = client.map("rnbd0", "s1", "disk", AccessMode.RW).get(10, TimeUnit.SECONDS);
        ExecutorService paths = Executors.newFixedThreadPool(OUT);
        try {
            int failed = 0;
            String first = null;
            for (int round = 0; round < ROUNDS; round++) {
                server.holdIo = true;
                List<CompletableFuture<Void>> writes = new ArrayList<>();
                for (int i = 0; i < OUT; i++) {
                    writes.add(d.write(i * 4096L, ByteBuffer.allocate(4096), false));
                }
                // the server restarts: a new id for the next OPEN, the old one unknown
                server.id++;
                server.holdIo = false;
                CyclicBarrier together = new CyclicBarrier(OUT);
                List<Future<?>> answers = new ArrayList<>();
                for (int i = 0; i < OUT; i++) {
                    IoDone done = server.held.poll();
                    answers.add(paths.submit(() -> {
                        together.await();
                        done.done(Errno.ENXIO);
                        return null;
                    }));
                }
                for (Future<?> a : answers) {
                    a.get(10, TimeUnit.SECONDS);
                }
                for (CompletableFuture<Void> w : writes) {
                    try {
                        w.get(10, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException e) {
                        failed++;
                        if (first == null) {
                            first = "round " + round + ": " + e.getCause();
                        }
                    }
                }
            }
            String why = first;
            assertEquals(0, failed, () -> "writes failed over " + ROUNDS + " restarts; first: " + why);
        } finally {
            paths.shutdownNow();
            client.close();
        }
    }
}
