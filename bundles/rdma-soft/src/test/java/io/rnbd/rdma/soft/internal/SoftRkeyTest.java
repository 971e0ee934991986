package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.testkit.rdma.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Remote keys a peer cannot guess: keys of one session say nothing about another's, and an
 * invalidated key is refused after the region is registered again.
 */
class SoftRkeyTest {
    static final int SAMPLES = 4096;

    private SoftDevice server;
    private SoftDevice client;

    @BeforeEach
    void open() throws Exception {
        server = new SoftDevice("srv", InetAddress.getByName("127.0.0.1"));
        client = new SoftDevice("cli", InetAddress.getByName("127.0.0.2"));
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    /** Keys as a session sees them: its regions' first keys, then each re-registered (always_invalidate). */
    private int[] sessionKeys(ProtectionDomain pd) throws Exception {
        int[] keys = new int[SAMPLES];
        MemoryRegion[] mrs = new MemoryRegion[64];
        for (int i = 0; i < mrs.length; i++) {
            mrs[i] = pd.register(ByteBuffer.allocateDirect(64), Access.all());
            keys[i] = mrs[i].rkey();
        }
        for (int i = mrs.length; i < SAMPLES; i++) {
            MemoryRegion mr = mrs[i % mrs.length];
            mr.invalidate();
            keys[i] = mr.reregister();
        }
        return keys;
    }

    /**
     * Two sessions' keys interleaved on one device. A counter times a constant (the old
     * scheme) gives one difference between consecutive keys and a fixed relation between
     * the two sessions' keys; random bits give neither, and every bit is set about half the
     * time. The thresholds leave a failure probability far below 1e-9 for random keys.
     */
    @Test
    void keysOfTwoSessionsAreNotDerivableFromEachOther() throws Exception {
        int[] a = sessionKeys(server.allocPd());
        int[] b = sessionKeys(server.allocPd());
        Set<Integer> diffs = new HashSet<>();
        Set<Integer> across = new HashSet<>();
        Set<Integer> xors = new HashSet<>();
        int[] bitCounts = new int[32];
        for (int i = 0; i < SAMPLES; i++) {
            assertNotEquals(0, a[i]);
            if (i > 0) {
                diffs.add(a[i] - a[i - 1]);
            }
            across.add(b[i] - a[i]);
            xors.add(b[i] ^ a[i]);
            for (int bit = 0; bit < 32; bit++) {
                bitCounts[bit] += (a[i] >>> bit) & 1;
            }
        }
        assertTrue(diffs.size() > SAMPLES * 99 / 100, "consecutive keys of a session differ by "
                + diffs.size() + " distinct steps: predictable");
        assertTrue(across.size() > SAMPLES * 99 / 100, "one session's keys give the other's: " + across.size());
        assertTrue(xors.size() > SAMPLES * 99 / 100, "one session's keys give the other's: " + xors.size());
        for (int bit = 0; bit < 32; bit++) {
            assertTrue(bitCounts[bit] > SAMPLES * 4 / 10 && bitCounts[bit] < SAMPLES * 6 / 10,
                    "bit " + bit + " set in " + bitCounts[bit] + " of " + SAMPLES + " keys");
        }
    }

    /**
     * A region re-registered gets a key it did not have just before, and the old key is
     * refused with a remote access error without touching memory; the new one works.
     */
    @Test
    void aStaleKeyIsRefusedAfterReregistration() throws Exception {
        ProtectionDomain spd = server.allocPd();
        ProtectionDomain cpd = client.allocPd();
        ByteBuffer target = ByteBuffer.allocateDirect(4096);
        MemoryRegion region = spd.register(target, Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        Set<Integer> seen = new HashSet<>();
        int stale = region.rkey();
        for (int i = 0; i < 1000; i++) {
            region.invalidate();
            int next = region.reregister();
            assertNotEquals(stale, next, "re-registration must give a fresh key");
            seen.add(next);
            stale = next;
        }
        assertTrue(seen.size() > 990, "keys of one region repeat: " + seen.size() + " distinct of 1000");
        stale = region.rkey();
        int fresh = region.reregister();
        assertNotEquals(stale, fresh);

        Endpoint se = new Endpoint("server");
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CmListener l = server.listen(new InetSocketAddress(server.address(), 0), req -> {
            try {
                accepted.complete(req.accept(new QpInit(spd, 16, 16, 1, se), se));
            } catch (Exception e) {
                accepted.completeExceptionally(e);
            }
        });
        MemoryRegion src = cpd.register(ByteBuffer.allocateDirect(64), Access.all());
        src.buffer().put(0, new byte[] {1, 2, 3, 4});

        Endpoint ce = new Endpoint("client");
        QueuePair qp = client.connect(l.localAddress(), new QpInit(cpd, 16, 16, 1, ce), null, ce);
        ce.nextEvent(CmEvent.Type.ESTABLISHED);
        accepted.get(10, TimeUnit.SECONDS);
        qp.postSend(SendWr.write(1, List.of(new Sge(src, 0, 4)), region.address(), fresh));
        ce.nextWc(WcStatus.SUCCESS);
        byte[] got = new byte[4];
        target.get(0, got);
        assertArrayEquals(new byte[] {1, 2, 3, 4}, got, "the live key works");

        src.buffer().put(0, new byte[] {9, 9, 9, 9});
        qp.postSend(SendWr.write(2, List.of(new Sge(src, 0, 4)), region.address(), stale));
        assertEquals(WcStatus.REM_ACCESS_ERR, ce.nextWc(WcStatus.REM_ACCESS_ERR).status());
        target.get(0, got);
        assertArrayEquals(new byte[] {1, 2, 3, 4}, got, "the stale key touched nothing");
        l.close();
    }
}
