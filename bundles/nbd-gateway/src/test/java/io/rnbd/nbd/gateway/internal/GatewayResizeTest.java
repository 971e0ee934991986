package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.common.Errno;
import io.rnbd.nbd.client.NbdClient;
import io.rnbd.nbd.gateway.testing.SoftRnbdStack;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 20 item 7 end to end: an export grown on the RNBD server reaches the mapped device
 * and the NBD gateway without a remap, over the real stack (RNBD over RTRS over two soft
 * RDMA devices). The gateway serves the device's size as it is now: a new NBD connection
 * negotiates the new size and its IO beyond the old end works. (NBD cannot tell a client
 * already connected that the size changed; it keeps the size it negotiated.)
 */
@Timeout(90)
class GatewayResizeTest {
    private static final long SIZE = 8L << 20;
    private SoftRnbdStack stack;
    private RemoteBlockDevice dev;

    @BeforeEach
    void start() throws Exception {
        stack = new SoftRnbdStack(128 * 1024).export("mem0", SIZE);
        dev = stack.map("rnbd0", "mem0");
    }

    @AfterEach
    void stop() throws Exception {
        stack.close();
    }

    @Test
    void aGrownExportReachesTheDeviceAndNewNbdConnectionsWithoutARemap() throws Exception {
        byte[] data = new byte[4096];
        new Random(7).nextBytes(data);
        try (NbdClient before = NbdClient.connect(stack.nbdAddress(), "rnbd0")) {
            assertEquals(SIZE, before.size());
            before.write(0, ByteBuffer.wrap(data), false).get(10, TimeUnit.SECONDS);

            stack.rnbdServer.resizeExport("mem0", 4 * SIZE);
            // what the client's periodic refresh (size.refresh.ms) does, run here at once
            stack.rnbdClient.refreshSizes().get(10, TimeUnit.SECONDS);
            assertEquals(4 * SIZE, dev.size());
            assertEquals(4 * SIZE, stack.rnbdClient.devices().get(0).size());

            try (NbdClient after = NbdClient.connect(stack.nbdAddress(), "rnbd0")) {
                assertEquals(4 * SIZE, after.size(), "the gateway's export size");
                long beyond = 3 * SIZE;
                after.write(beyond, ByteBuffer.wrap(data), true).get(10, TimeUnit.SECONDS);
                ByteBuffer back = ByteBuffer.allocate(4096);
                after.read(beyond, back).get(10, TimeUnit.SECONDS);
                assertArrayEquals(data, back.array(), "IO beyond the old end");
                ByteBuffer first = ByteBuffer.allocate(4096);
                after.read(0, first).get(10, TimeUnit.SECONDS);
                assertArrayEquals(data, first.array(), "the data before the resize");
            }
            // the connection from before keeps working within the size it negotiated
            ByteBuffer old = ByteBuffer.allocate(4096);
            before.read(0, old).get(10, TimeUnit.SECONDS);
            assertArrayEquals(data, old.array());

            // shrinking below what the client mapped is refused while it is mapped
            BlockIoException busy = assertThrows(BlockIoException.class,
                    () -> stack.rnbdServer.resizeExport("mem0", SIZE));
            assertEquals(Errno.EBUSY, busy.errno());
            stack.rnbdClient.refreshSizes().get(10, TimeUnit.SECONDS);
            assertEquals(4 * SIZE, dev.size());
        }
    }
}
