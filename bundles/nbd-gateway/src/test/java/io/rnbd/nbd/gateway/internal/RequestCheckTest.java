package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.nbd.proto.Request;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.testkit.block.FakeBlockDevice;
import org.junit.jupiter.api.Test;

/**
 * The refusals of doc/proto.md's transmission phase without a socket, one row each: which
 * error a request gets before it reaches the device (NbdServerTest sends the same mistakes
 * over the wire and checks the connection stays).
 */
class RequestCheckTest {
    private static final int SIZE = 1 << 20;
    private static final Capabilities NO_TRIM_NO_ZERO = new Capabilities(true, true, true, false, false, true);

    private static RequestCheck check(int flags, boolean structured, Capabilities caps) {
        return new RequestCheck(flags, structured, caps,
                new FakeBlockDevice(SIZE).limitingEveryRequest().withCapabilities(caps).completingOn(Runnable::run));
    }

    private static int errorOf(RequestCheck c, int type, int cmdFlags, long offset, long length) {
        return c.errorOf(new Request(cmdFlags, type, 1, offset, length));
    }

    @Test
    void aWritableExportWithFua() {
        RequestCheck c = check(FLAG_SEND_FUA, false, FakeBlockDevice.ALL);
        assertEquals(0, errorOf(c, CMD_READ, 0, 0, 4096));
        assertEquals(0, errorOf(c, CMD_WRITE, CMD_FLAG_FUA, SIZE - 512, 512));
        assertEquals(0, errorOf(c, CMD_FLUSH, 0, 0, 0));
        assertEquals(0, errorOf(c, CMD_TRIM, CMD_FLAG_FUA, 0, SIZE));
        assertEquals(0, errorOf(c, CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE | CMD_FLAG_FAST_ZERO, 512, 512));
        assertEquals(0, errorOf(c, CMD_WRITE, 0, SIZE, 0));
        assertEquals(EINVAL, errorOf(c, 9, 0, 0, 512), "unknown command");
        assertEquals(EINVAL, errorOf(c, CMD_WRITE, 1 << 7, 0, 512), "unknown flag");
        assertEquals(EINVAL, errorOf(c, CMD_READ, CMD_FLAG_DF, 0, 512), "DF without structured replies");
        assertEquals(EINVAL, errorOf(c, CMD_WRITE, CMD_FLAG_NO_HOLE, 0, 512), "NO_HOLE on a write");
        assertEquals(EINVAL, errorOf(c, CMD_FLUSH, 0, 0, 512), "flush with a range");
        assertEquals(EINVAL, errorOf(c, CMD_READ, 0, 100, 512), "misaligned offset");
        assertEquals(EINVAL, errorOf(c, CMD_WRITE, 0, 0, 100), "misaligned length");
        assertEquals(EINVAL, errorOf(c, CMD_READ, 0, SIZE, 512), "read beyond the end");
        assertEquals(EINVAL, errorOf(c, CMD_TRIM, 0, SIZE - 512, 1024), "trim beyond the end");
        assertEquals(ENOSPC, errorOf(c, CMD_WRITE, 0, SIZE - 512, 1024), "write beyond the end");
        assertEquals(ENOSPC, errorOf(c, CMD_WRITE_ZEROES, 0, SIZE + 512, 512), "zeroes beyond the end");
        assertEquals(EINVAL, errorOf(c, CMD_READ, 0, 0, MAX_PAYLOAD + 512L), "read over 32 MiB");
        assertEquals(EINVAL, errorOf(c, CMD_READ, 0, -512, 512), "offset past 2^63");
    }

    @Test
    void whatTheNegotiationAndTheDeviceLeaveOut() {
        assertEquals(0, errorOf(check(0, true, FakeBlockDevice.ALL), CMD_READ, CMD_FLAG_DF, 0, 512));
        assertEquals(EINVAL, errorOf(check(0, false, FakeBlockDevice.ALL), CMD_WRITE, CMD_FLAG_FUA, 0, 512),
                "FUA not offered");
        RequestCheck readOnly = check(FLAG_SEND_FUA, false, Capabilities.READ_ONLY);
        assertEquals(0, errorOf(readOnly, CMD_READ, 0, 0, 512));
        assertEquals(EPERM, errorOf(readOnly, CMD_WRITE, 0, 0, 512));
        assertEquals(EPERM, errorOf(readOnly, CMD_TRIM, 0, 0, 512));
        assertEquals(EPERM, errorOf(readOnly, CMD_WRITE_ZEROES, 0, 0, 512));
        assertEquals(EINVAL, errorOf(readOnly, CMD_FLUSH, 0, 0, 0), "no flush to offer");
        RequestCheck plain = check(FLAG_SEND_FUA, false, NO_TRIM_NO_ZERO);
        assertEquals(EINVAL, errorOf(plain, CMD_TRIM, 0, 0, 512), "trim not offered");
        assertEquals(0, errorOf(plain, CMD_WRITE_ZEROES, 0, 0, 512), "zeroes are written when not offered");
        assertEquals(ENOTSUP, errorOf(plain, CMD_WRITE_ZEROES, CMD_FLAG_FAST_ZERO, 0, 512));
    }

    @Test
    void theMessageOfEachRefusal() {
        Request r = new Request(1 << 7, CMD_WRITE, 1, -512, 512);
        assertEquals("read-only export", RequestCheck.why(r, EPERM));
        assertEquals("write beyond the end of the export", RequestCheck.why(r, ENOSPC));
        assertEquals("zeroing is not faster than writing on this export", RequestCheck.why(r, ENOTSUP));
        assertEquals("the device was unmapped (rnbd:unmap --force); disconnect", RequestCheck.why(r, ESHUTDOWN));
        assertEquals("invalid request (type 1, flags 0x80, offset 18446744073709551104, length 512)",
                RequestCheck.why(r, EINVAL));
    }
}
