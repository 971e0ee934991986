package io.rnbd.rnbd.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.MsgType;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rtrs.api.IoDone;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.ToIntFunction;
import io.rnbd.testkit.LogCapture;
import org.junit.jupiter.api.Test;

/** The client device against a scripted session: exactly what goes on the wire. */
class RnbdClientDeviceTest {
    /** A connected session answering inline: SESS_INFO, a given OPEN_RSP, IO by a function. */
    private static final class ScriptedSession extends ConnectedSession {
        final List<Io> ios = new ArrayList<>();
        final List<byte[]> data = new ArrayList<>();
        /** What OPEN is answered with; a test changes it to play a server whose export grew. */
        volatile ByteBuffer openRsp;
        volatile int openErrno;
        int opens;
        ToIntFunction<Io> ioAnswer = io -> 0;
        boolean plugged;
        int plugsTaken;
        int underPlug;

        @Override
        public io.rnbd.rtrs.api.RtrsPlug plug() {
            if (plugged) {
                return io.rnbd.rtrs.api.RtrsPlug.NONE;
            }
            plugged = true;
            plugsTaken++;
            return () -> plugged = false;
        }

        ScriptedSession(ByteBuffer openRsp, int maxIo) {
            super(maxIo);
            this.openRsp = openRsp;
        }

        @Override
        void answer(RnbdMsg m, ByteBuffer payload, ByteBuffer dst, IoDone done) {
            if (m.type() == MsgType.OPEN) {
                opens++;
                if (openErrno != 0) {
                    done.done(openErrno);
                    return;
                }
                dst.duplicate().put(openRsp.duplicate());
                done.done(0);
            } else if (m instanceof Io io) {
                ios.add(io);
                if (plugged) {
                    underPlug++;
                }
                byte[] b = new byte[payload == null ? 0 : payload.remaining()];
                if (payload != null) {
                    payload.duplicate().get(b);
                }
                data.add(b);
                done.done(ioAnswer.applyAsInt(io));
            } else {
                done.done(0);
            }
        }
    }

    private static ByteBuffer openRsp(int maxHwSectors, int maxZeroSectors, int maxDiscardSectors) {
        return new OpenRsp(42, 2048, maxHwSectors, maxZeroSectors, maxDiscardSectors, 512, 0, 4096, 512, 128,
                false, OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK).toBuffer();
    }

    private static ByteBuffer openRspOfSectors(long nsectors) {
        return new OpenRsp(42, nsectors, 16, 0, 8, 512, 0, 4096, 512, 128, false,
                OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK).toBuffer();
    }

    /**
     * The refresh is an OPEN like any other on the wire; a bigger nsectors is adopted with the
     * same device id and told to watchers; a refused refresh leaves the mapping as it was.
     */
    @Test
    void aRefreshAdoptsTheServersSizeAndARefusedOneChangesNothing() throws Exception {
        ScriptedSession s = new ScriptedSession(openRspOfSectors(2048), 1 << 20);
        RnbdClientDevice d = (RnbdClientDevice) map(clientOver(s));
        List<Long> told = new ArrayList<>();
        d.watchSize(told::add);
        assertEquals(1 << 20, d.size());

        s.openRsp = openRspOfSectors(8192);
        assertEquals(4L << 20, d.refreshSize().get());
        assertEquals(List.of(4L << 20), told);
        assertEquals(DeviceState.MAPPED, d.state());
        assertEquals(2, s.opens);

        s.openErrno = Errno.ENOENT;
        assertEquals(4L << 20, d.refreshSize().get());
        assertEquals(DeviceState.MAPPED, d.state(), "a refused refresh is no failed mapping");
        d.write((4L << 20) - 512, ByteBuffer.wrap(new byte[512]), false).get();
        assertEquals(List.of("1@" + ((4L << 20) - 512) + "+512#42"), wire(s), "the same device id, beyond the old end");
    }

    /**
     * The client refreshes every mapped device's size every 5 s (size.refresh.ms): a refresh
     * that changed nothing is no news in the log, where the map itself and a size change are.
     * Before, every refresh logged "open as id" at INFO (17 280 lines a day per device).
     */
    @Test
    void aRefreshThatChangesNothingLogsNothingAtInfo() throws Exception {
        ScriptedSession s = new ScriptedSession(openRspOfSectors(2048), 1 << 20);
        try (LogCapture log = LogCapture.start()) {
            RnbdClientDevice d = (RnbdClientDevice) map(clientOver(s));
            assertTrue(log.contains("open as id 42"), log.text());
            int linesAfterMap = log.lines().size();
            d.refreshSize().get();
            d.refreshSize().get();
            assertEquals(3, s.opens);
            assertEquals(linesAfterMap, log.lines().size(), "refreshes that changed nothing: " + log.text());
            s.openRsp = openRspOfSectors(4096);
            d.refreshSize().get();
            assertTrue(log.contains("size changed from 1048576 to 2097152"), log.text());
        }
    }

    /** IO beyond the end asks the server once; if the export did not grow, it fails as before. */
    @Test
    void ioBeyondTheEndAsksOnceThenFails() throws Exception {
        ScriptedSession s = new ScriptedSession(openRspOfSectors(2048), 1 << 20);
        RemoteBlockDevice d = map(clientOver(s));
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> d.read(1 << 20, ByteBuffer.allocate(512)).get());
        assertEquals(Errno.EINVAL, BlockIoException.errnoOf(e));
        assertEquals(2, s.opens, "map, then one refresh");
        assertTrue(s.ios.isEmpty(), "nothing beyond the end went out");
        s.openRsp = openRspOfSectors(4096);
        d.read(1 << 20, ByteBuffer.allocate(512)).get();
        assertEquals(List.of("0@" + (1 << 20) + "+512#42"), wire(s));
    }

    private static RnbdClient clientOver(ScriptedSession s) {
        RnbdClient c = new RnbdClient(DevicePublisher.NONE);
        c.sessionAdded(s);
        return c;
    }

    private static RemoteBlockDevice map(RnbdClient c) throws Exception {
        return c.map("rnbd0", "s1", "disk", AccessMode.RW).get();
    }

    private static List<String> wire(ScriptedSession s) {
        return s.ios.stream().map(io -> io.op() + (io.has(Io.F_FUA) ? "F" : "") + "@" + io.offset() + "+"
                + io.biSize() + "#" + io.deviceId()).toList();
    }

    /**
     * As Linux's rnbd_client_setup_device: requests are cut to the session's max IO, whatever
     * OPEN_RSP's max_hw_sectors says (both servers split what their device cannot take).
     */
    @Test
    void requestsAreCutToTheSessionsMaxIo() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 0, 8), 4096);
        RemoteBlockDevice d = map(clientOver(s));
        assertEquals(4096, d.maxIoSize(), "the session's limit");
        ScriptedSession wide = new ScriptedSession(openRsp(2, 0, 8), 4096);
        assertEquals(4096, map(clientOver(wide)).maxIoSize(), "max_hw_sectors of 1 KiB plays no part");
        byte[] buf = new byte[10 * 512];
        for (int i = 0; i < buf.length; i++) {
            buf[i] = (byte) i;
        }
        d.write(1024, ByteBuffer.wrap(buf), true).get();
        assertEquals(List.of("1F@1024+4096#42", "1F@5120+1024#42"), wire(s));
        assertArrayEquals(java.util.Arrays.copyOfRange(buf, 0, 4096), s.data.get(0));
        assertArrayEquals(java.util.Arrays.copyOfRange(buf, 4096, 5120), s.data.get(1));
    }

    @Test
    void thePlugIsTheSessionsAndTheDevicePlugsTheSplitOfARequest() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 0, 8), 4096);
        RemoteBlockDevice d = map(clientOver(s));
        try (io.rnbd.rnbd.api.BlockPlug plug = d.plug()) {
            assertTrue(s.plugged);
            assertSame(io.rnbd.rnbd.api.BlockPlug.NONE, d.plug(), "nested: the session's NONE");
            d.write(0, ByteBuffer.wrap(new byte[4096]), false).get();
            d.write(8192, ByteBuffer.wrap(new byte[10 * 512]), false).get(); // two pieces, inside our plug
        }
        assertFalse(s.plugged);
        assertEquals(1, s.plugsTaken);
        assertEquals(3, s.underPlug);
        d.write(0, ByteBuffer.wrap(new byte[10 * 512]), false).get(); // two pieces: the device plugs them
        assertEquals(2, s.plugsTaken);
        assertEquals(5, s.underPlug);
        d.write(0, ByteBuffer.wrap(new byte[512]), false).get(); // one piece: no plug
        assertEquals(2, s.plugsTaken);
        assertEquals(5, s.underPlug);
    }

    @Test
    void discardFollowsMaxDiscardAndFlushCarriesNoData() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 0, 8), 1 << 20);
        RemoteBlockDevice d = map(clientOver(s));
        d.trim(0, 10 * 1024).get();
        d.flush().get();
        assertEquals(List.of("3@0+4096#42", "3@4096+4096#42", "3@8192+2048#42", "2@0+0#42"), wire(s));
        assertTrue(s.data.stream().allMatch(b -> b.length == 0));
    }

    @Test
    void writeZeroesFallsBackToZeroWritesWhenTheServerHasNone() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 0, 0), 8192);
        RemoteBlockDevice d = map(clientOver(s));
        assertFalse(d.capabilities().zero());
        assertFalse(d.capabilities().trim());
        d.writeZeroes(0, 20 * 1024, false).get();
        assertEquals(List.of("1@0+8192#42", "1@8192+8192#42", "1@16384+4096#42"), wire(s));
        for (byte[] b : s.data) {
            assertArrayEquals(new byte[b.length], b);
        }
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> d.trim(0, 512).get());
        assertEquals(Errno.EOPNOTSUPP, BlockIoException.errnoOf(e));
    }

    @Test
    void writeZeroesUsesTheServersOpWhenOffered() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 16, 0), 1 << 20);
        map(clientOver(s)).writeZeroes(0, 12 * 1024, true).get();
        assertEquals(List.of("5F@0+8192#42", "5F@8192+4096#42"), wire(s));
    }

    /** Protocol 2.2 toward a server: NOUNMAP on WRITE_ZEROES when asked, SECURE_ERASE only where offered. */
    @Test
    void noUnmapAndSecureEraseGoOnTheWireAsLinuxsClientSendsThem() throws Exception {
        ScriptedSession s = new ScriptedSession(new OpenRsp(42, 2048, 16, 16, 8, 512, 0, 4096, 512, 128, true,
                OpenRsp.CACHE_WRITEBACK).toBuffer(), 1 << 20);
        RemoteBlockDevice d = map(clientOver(s));
        assertTrue(d.capabilities().secureErase());
        d.writeZeroes(0, 4096, false, true).get();
        d.writeZeroes(0, 4096, false, false).get();
        d.secureErase(0, 6144).get();
        assertEquals(List.of(Io.OP_WRITE_ZEROES | Io.F_NOUNMAP, Io.OP_WRITE_ZEROES, Io.OP_SECURE_ERASE,
                Io.OP_SECURE_ERASE), s.ios.stream().map(Io::rw).toList());
        assertEquals(List.of("5@0+4096#42", "5@0+4096#42", "4@0+4096#42", "4@4096+2048#42"), wire(s),
                "secure erase in pieces of max_discard_sectors");
        ScriptedSession plain = new ScriptedSession(openRsp(16, 16, 8), 1 << 20);
        RemoteBlockDevice p = map(clientOver(plain));
        assertFalse(p.capabilities().secureErase());
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> p.secureErase(0, 512).get());
        assertEquals(Errno.EOPNOTSUPP, BlockIoException.errnoOf(e));
        assertTrue(plain.ios.isEmpty());
    }

    @Test
    void firstPieceErrorFailsTheRequestOnce() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(8, 0, 0), 4096);
        RnbdClient c = clientOver(s);
        RemoteBlockDevice d = map(c);
        s.ioAnswer = io -> io.offset() == 4096 ? Errno.EIO : 0;
        CompletableFuture<Void> f = d.read(0, ByteBuffer.allocate(12 * 1024));
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
        assertEquals(Errno.EIO, BlockIoException.errnoOf(e));
        assertEquals(3, s.ios.size());
        var stats = c.devices().get(0).stats();
        assertEquals(1, stats.errors());
        assertEquals(0, stats.reads());
        assertEquals(0, stats.inflight());
        assertEquals(1, stats.latency().count(), "one latency per request, not per piece");
    }

    /**
     * Issue 35: the appliance could not map a Linux 6.12 export ("bad OPEN_RSP: EINVAL: max
     * sectors out of range"). A brd disk of 6.12 (and 7.2) reports max_discard_sectors UINT_MAX
     * and no write cache. The encoder's bytes of this record are rnbd_srv_fill_msg_open_rsp's
     * (rnbd-proto's LinuxHeaderGoldenTest, open_rsp_brd, from the compiled header).
     */
    @Test
    void aLinux612BrdExportMaps() throws Exception {
        ByteBuffer brd = new OpenRsp(0, 131072, 255, 0, 0xffff_ffffL, 4096, 0, 4096, 512, 128, false, 0).toBuffer();
        ScriptedSession s = new ScriptedSession(brd, 126976);
        RnbdClient c = clientOver(s);
        RemoteBlockDevice d = map(c);
        assertEquals(64L << 20, d.size());
        assertEquals(126976, d.maxIoSize());
        assertEquals(4096, d.physicalBlockSize());
        assertTrue(d.capabilities().trim(), "UINT_MAX sectors of discard");
        assertFalse(d.capabilities().zero(), "brd has no write zeroes");
        assertFalse(d.capabilities().flush(), "no write cache");
        d.trim(0, 64L << 20).get();
        assertEquals(List.of("3@0+67108864#0"), wire(s), "one DISCARD for the whole disk");
        assertEquals(DeviceState.MAPPED, c.devices().get(0).state());
    }

    /**
     * A newer server's cache_policy bits are ignored as Linux's client ignores them, and
     * counted; FUA without WRITEBACK means nothing, as in Linux (no cache, nothing to force).
     */
    @Test
    void unknownCachePolicyBitsAreIgnoredAndCounted() throws Exception {
        ScriptedSession s = new ScriptedSession(new OpenRsp(42, 2048, 16, 0, 0, 512, 0, 4096, 512, 128, false,
                0x80 | OpenRsp.CACHE_FUA).toBuffer(), 1 << 20);
        RnbdClient c = clientOver(s);
        RemoteBlockDevice d = map(c);
        assertFalse(d.capabilities().flush());
        assertFalse(d.capabilities().fua(), "FUA counts only with a write cache");
        assertEquals(1, c.devices().get(0).stats().unknown());
        d.write(0, ByteBuffer.allocate(512), false).get();
        ScriptedSession known = new ScriptedSession(new OpenRsp(42, 2048, 16, 0, 0, 512, 0, 4096, 512, 128, false,
                OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK).toBuffer(), 1 << 20);
        RnbdClient k = clientOver(known);
        assertTrue(map(k).capabilities().fua());
        assertEquals(0, k.devices().get(0).stats().unknown());
    }

    @Test
    void garbageOpenAnswerFailsTheMapping() throws Exception {
        ScriptedSession s = new ScriptedSession(ByteBuffer.allocate(OpenRsp.SIZE), 1 << 20);
        RnbdClient c = clientOver(s);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> c.map("rnbd0", "s1", "disk", AccessMode.RW).get());
        assertEquals(Errno.EPROTO, BlockIoException.errnoOf(e));
        assertEquals(DeviceState.FAILED, c.devices().get(0).state());
        assertEquals(Errno.EPROTO, c.devices().get(0).lastError());
    }

    @Test
    void badRequestsFailLocally() throws Exception {
        ScriptedSession s = new ScriptedSession(openRsp(16, 16, 16), 1 << 20);
        RemoteBlockDevice d = map(clientOver(s));
        for (CompletableFuture<Void> f : List.of(d.read(100, ByteBuffer.allocate(512)),
                d.read(0, ByteBuffer.allocate(100)), d.write(2048 * 512, ByteBuffer.allocate(512), false),
                d.trim(-512, 512))) {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
            assertEquals(Errno.EINVAL, BlockIoException.errnoOf(e));
        }
        d.read(0, ByteBuffer.allocate(0)).get();
        assertTrue(s.ios.isEmpty(), "nothing went on the wire");
    }
}
