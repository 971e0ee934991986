package io.rnbd.testkit.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.SharedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The stand-in against the contract the RBD backend also runs, and what only it can show: a held write. */
class FakeSharedBackendTest extends SharedDeviceContractTest {
    private final FakeSharedBackend.Cluster cluster = new FakeSharedBackend.Cluster();

    @Override
    protected SharedDevice openShared(String image) throws IOException {
        return new FakeSharedBackend(cluster, "shared").openShared(Map.of("image", image, "size",
                Long.toString(SIZE)));
    }

    /**
     * A frozen holder's write, on its way before the takeover and reaching the storage after
     * it, is refused there (Ceph's OSDs refuse a blocklisted client's op whenever it arrives):
     * the newer holder's data stays.
     */
    @Test
    void aWriteSentBeforeTheTakeoverThatArrivesAfterItIsRefused() throws Exception {
        String image = newImage();
        FakeSharedBackend.SharedFake a = (FakeSharedBackend.SharedFake) open(image);
        SharedDevice b = open(image);
        a.takeOver("A", a.holder());
        a.hold();
        CompletableFuture<Void> stale = a.write(0, ByteBuffer.wrap(pattern(10)), false);
        b.takeOver("B", b.holder());
        byte[] newer = pattern(11);
        await(b.write(0, ByteBuffer.wrap(newer), false));
        a.release();
        try {
            stale.get();
            throw new AssertionError("the stale write landed");
        } catch (ExecutionException e) {
            assertEquals(Errno.ESHUTDOWN, BlockIoException.errnoOf(e.getCause()));
        }
        byte[] now = new byte[4096];
        System.arraycopy(cluster.store(image), 0, now, 0, now.length);
        assertArrayEquals(newer, now);
        assertTrue(cluster.isFenced(a.identity()));
        assertFalse(cluster.isFenced(b.identity()));
    }

    @Test
    void aForeignLockIsAHolderWithoutARecordedServer() throws Exception {
        String image = newImage();
        SharedDevice a = open(image);
        a.takeOver("A", a.holder());
        String foreign = cluster.foreignLock(image);
        SharedDevice b = open(image);
        SharedDevice.Holder h = b.holder();
        assertEquals(foreign, h.owner());
        assertEquals("", h.server());
        assertEquals(0, h.sinceMillis());
        assertEquals(1, h.generation(), "the generation the last server recorded");
    }
}
