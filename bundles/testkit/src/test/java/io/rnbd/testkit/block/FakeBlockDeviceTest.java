package io.rnbd.testkit.block;

import static io.rnbd.testkit.block.BlockDeviceContractTest.expect;
import static io.rnbd.testkit.block.BlockDeviceContractTest.filled;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class FakeBlockDeviceTest {
    @Test
    void heldRequestsRunInOrderOnRelease() {
        FakeBlockDevice dev = new FakeBlockDevice(4096);
        dev.hold();
        CompletableFuture<Void> first = dev.write(0, filled(512, 1), false);
        CompletableFuture<Void> second = dev.write(0, filled(512, 2), true);
        assertEquals(2, dev.heldCount());
        assertFalse(first.isDone() || second.isDone());
        dev.release();
        assertTrue(first.isDone() && second.isDone());
        assertArrayEquals(filled(512, 2).array(), dev.snapshot(0, 512));
        assertEquals(1, dev.fuaWrites());
        assertEquals(0, dev.heldCount());
    }

    @Test
    void aRequestIsCheckedWhenItRunsNotWhenSubmitted() {
        List<Runnable> later = new ArrayList<>();
        FakeBlockDevice dev = new FakeBlockDevice(4096).completingOn(later::add);
        CompletableFuture<Void> read = dev.read(0, ByteBuffer.allocate(512));
        dev.close();
        later.forEach(Runnable::run);
        expect(Errno.ENODEV, read);
        assertEquals(1, dev.ops());
    }

    @Test
    void refusesWhatAStrictDeviceRefuses() {
        FakeBlockDevice dev = new FakeBlockDevice(1 << 20).withMaxIoSize(4096);
        expect(Errno.EINVAL, dev.read(1, ByteBuffer.allocate(512)));
        expect(Errno.EINVAL, dev.write(1 << 20, filled(512, 1), false));
        expect(Errno.EINVAL, dev.write(0, filled(8192, 1), false));
        dev.trim(0, 8192).join(); // a trim may be longer than a READ or WRITE ...
        expect(Errno.EINVAL, dev.limitingEveryRequest().trim(0, 8192)); // ... unless the caller promises to split
        dev.failWith(Errno.ENOSPC);
        expect(Errno.ENOSPC, dev.flush());
        dev.failWith(0);
        dev.flush().join();
        FakeBlockDevice ro = new FakeBlockDevice(4096).readOnly();
        assertEquals(Capabilities.READ_ONLY, ro.capabilities());
        expect(Errno.EROFS, ro.writeZeroes(0, 512, false));
    }

    @Test
    void opensOfOneIdShareTheirBytes() throws Exception {
        FakeBackend backend = new FakeBackend();
        backend.open(Map.of("id", "d", "size", "4096"), false).write(512, filled(512, 9), false).join();
        byte[] back = new byte[512];
        backend.open(Map.of("id", "d"), true).read(512, ByteBuffer.wrap(back)).join();
        assertArrayEquals(filled(512, 9).array(), back);
        assertEquals(4096, backend.store("d").length);
        assertFalse(backend.device("d").capabilities().write());
    }

    @Test
    void aPlugCountsWhatItsThreadSubmitted() {
        FakeBlockDevice dev = new FakeBlockDevice(4096);
        try (BlockPlug plug = dev.plug()) {
            assertEquals(BlockPlug.NONE, dev.plug(), "a thread holds one plug");
            dev.read(0, ByteBuffer.allocate(512));
            dev.flush();
        }
        dev.flush();
        assertEquals(List.of(2), dev.plugged());
        assertEquals(3, dev.ops());
    }
}
