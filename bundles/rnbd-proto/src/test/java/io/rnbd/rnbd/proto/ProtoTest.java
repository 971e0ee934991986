package io.rnbd.rnbd.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ProtoTest {
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replaceAll("[\\s|]", ""));
    }

    private static String zeros(int bytes) {
        return "00".repeat(bytes);
    }

    private static void assertGolden(RnbdMsg msg, String expectedHex) throws ProtoException {
        byte[] expected = hex(expectedHex);
        assertEquals(msg.type().size(), expected.length, "golden length");
        ByteBuffer b = msg.toBuffer();
        byte[] actual = new byte[b.remaining()];
        b.get(actual);
        assertArrayEquals(expected, actual, () -> HexFormat.of().formatHex(actual));
        assertEquals(msg, RnbdMsg.decode(ByteBuffer.wrap(expected)));
    }

    @Test
    void sessInfoGolden() throws Exception {
        assertGolden(new SessInfo(2), "0000 0000 02" + zeros(31));
        assertGolden(new SessInfoRsp(2), "0100 0000 02" + zeros(31));
    }

    @Test
    void openGolden() throws Exception {
        assertGolden(new Open(AccessMode.RW, "disk0"),
                "0200 0000 | 01 | 00 | 6469736b30" + zeros(264 - 11));
        assertGolden(new Open(AccessMode.MIGRATION, "a"), "0200 0000 02 00 61" + zeros(264 - 7));
    }

    @Test
    void openRspGolden() throws Exception {
        assertGolden(new OpenRsp(3, 0x200000L, 248, 0x10000, 0x10000, 4096, 0, 4096, 512, 128, false,
                        OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK),
                "0300 0000 | 03000000 | 0000200000000000 | f8000000 | 00000100 | 00000100 | 00100000"
                        + " | 00000000 | 0010 | 0002 | 8000 | 0000 | 00 | 03 |" + zeros(10));
    }

    @Test
    void ioGolden() throws Exception {
        Io io = Io.of(1, 8, Io.OP_WRITE, Io.F_FUA, 4096);
        assertGolden(io, "0400 0000 | 01000000 | 0800000000000000 | 01020000 | 00100000 | 0000 |" + zeros(6));
        assertEquals(Io.OP_WRITE, io.op());
        assertTrue(io.has(Io.F_FUA));
        assertEquals(4096, io.offset());
        assertGolden(new Io(2, 0, Io.OP_WRITE_ZEROES | Io.F_NOUNMAP | Io.F_SYNC, 1 << 20, 3),
                "0400 0000 | 02000000 | 0000000000000000 | 05090000 | 00001000 | 0300 |" + zeros(6));
    }

    @Test
    void closeGolden() throws Exception {
        assertGolden(new Close(7), "0500 0000 0700 0000");
    }

    @Test
    void sizesMatchTheKernel() {
        assertEquals(36, MsgType.SESS_INFO.size());
        assertEquals(36, MsgType.SESS_INFO_RSP.size());
        assertEquals(264, MsgType.OPEN.size());
        assertEquals(56, MsgType.OPEN_RSP.size());
        assertEquals(32, MsgType.IO.size());
        assertEquals(8, MsgType.CLOSE.size());
    }

    @Test
    void encodeAdvancesAndDecodeConsumes() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(Close.SIZE + Io.SIZE);
        new Close(1).encode(b);
        Io.of(1, 0, Io.OP_READ, 0, 512).encode(b);
        assertEquals(b.capacity(), b.position());
        b.flip();
        assertEquals(new Close(1), Close.decode(b));
        assertEquals(Close.SIZE, b.position());
        assertEquals(Io.OP_READ, Io.decode(b).op());
        assertEquals(0, b.remaining());
    }

    private static int errnoOf(byte[] raw) {
        return assertThrows(ProtoException.class, () -> RnbdMsg.decode(ByteBuffer.wrap(raw))).errno();
    }

    private static byte[] valid(RnbdMsg m) {
        ByteBuffer b = m.toBuffer();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    @Test
    void malformedHeaders() {
        assertEquals(Errno.EMSGSIZE, errnoOf(new byte[0]));
        assertEquals(Errno.EMSGSIZE, errnoOf(new byte[3]));
        assertEquals(Errno.EBADMSG, errnoOf(hex("0600 0000 0000 0000")));
        assertEquals(Errno.EBADMSG, errnoOf(hex("ffff 0000 0000 0000")));
    }

    @Test
    void wrongLengths() {
        byte[] io = valid(Io.of(1, 0, Io.OP_READ, 0, 512));
        assertEquals(Errno.EMSGSIZE, errnoOf(java.util.Arrays.copyOf(io, 31)));
        assertEquals(Errno.EMSGSIZE, errnoOf(java.util.Arrays.copyOf(io, 33)));
        // A typed decoder reads a prefix but still refuses a short one.
        assertEquals(Errno.EMSGSIZE, assertThrows(ProtoException.class,
                () -> Io.decode(ByteBuffer.wrap(io, 0, 20))).errno());
        // and refuses another type.
        assertEquals(Errno.EBADMSG, assertThrows(ProtoException.class,
                () -> Open.decode(ByteBuffer.wrap(io))).errno());
    }

    @Test
    void malformedOpen() {
        byte[] ok = valid(new Open(AccessMode.RO, "x"));
        byte[] badMode = ok.clone();
        badMode[4] = 3;
        assertEquals(Errno.EINVAL, errnoOf(badMode));
        byte[] empty = ok.clone();
        empty[6] = 0;
        assertEquals(Errno.EINVAL, errnoOf(empty));
        byte[] unterminated = ok.clone();
        java.util.Arrays.fill(unterminated, 6, 6 + 255, (byte) 'a');
        assertEquals(Errno.EINVAL, errnoOf(unterminated));
        byte[] notUtf8 = ok.clone();
        notUtf8[6] = (byte) 0xff;
        assertEquals(Errno.EINVAL, errnoOf(notUtf8));
        // 254 bytes plus NUL is the longest name
        byte[] longest = ok.clone();
        java.util.Arrays.fill(longest, 6, 6 + 254, (byte) 'b');
        assertEquals(254, assertDecodes(longest, Open.class).deviceName().length());
        assertThrows(IllegalArgumentException.class, () -> new Open(AccessMode.RW, "b".repeat(255)));
        assertThrows(IllegalArgumentException.class, () -> new Open(AccessMode.RW, ""));
        assertThrows(IllegalArgumentException.class, () -> new Open(AccessMode.RW, "a\0b"));
    }

    @Test
    void malformedIo() {
        byte[] ok = valid(Io.of(1, 0, Io.OP_READ, 0, 512));
        byte[] badOp = ok.clone();
        badOp[16] = 6;
        assertEquals(Errno.EINVAL, errnoOf(badOp));
        byte[] badFlag = ok.clone();
        badFlag[17] = 0x10;
        assertEquals(Errno.EINVAL, errnoOf(badFlag));
        byte[] hugeSector = ok.clone();
        hugeSector[15] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(hugeSector));
        byte[] hugeSize = ok.clone();
        hugeSize[23] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(hugeSize));
    }

    @Test
    void malformedOpenRsp() {
        byte[] ok = valid(new OpenRsp(1, 8, 8, 0, 0, 0, 0, 4096, 512, 1, false, 0));
        byte[] oddBlock = ok.clone();
        oddBlock[38] = 0x01;
        oddBlock[39] = 0x03; // 769
        assertEquals(Errno.EINVAL, errnoOf(oddBlock));
        byte[] physSmaller = ok.clone();
        physSmaller[36] = 0;
        physSmaller[37] = 0x02; // physical 512 < logical? equal is fine, make logical 1024
        physSmaller[39] = 0x04;
        assertEquals(Errno.EINVAL, errnoOf(physSmaller));
        byte[] badCache = ok.clone();
        badCache[45] = 4;
        assertEquals(Errno.EINVAL, errnoOf(badCache));
        byte[] negSectors = ok.clone();
        negSectors[15] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(negSectors));
    }

    @Test
    void reservedBytesAreIgnoredOnDecodeButZeroOnEncode() throws Exception {
        byte[] raw = valid(new SessInfo(2));
        raw[35] = 0x55;
        assertEquals(new SessInfo(2), RnbdMsg.decode(ByteBuffer.wrap(raw)));
        assertEquals(0, valid(new SessInfo(2))[35]);
    }

    @Test
    void garbageNeverThrowsAnythingButProtoException() {
        java.util.Random r = new java.util.Random(42);
        for (int i = 0; i < 20_000; i++) {
            byte[] raw = new byte[r.nextInt(300)];
            r.nextBytes(raw);
            if (raw.length >= 2 && r.nextBoolean()) {
                raw[0] = (byte) r.nextInt(6);
                raw[1] = 0;
            }
            try {
                RnbdMsg.decode(ByteBuffer.wrap(raw));
            } catch (ProtoException expected) {
                assertTrue(expected.errno() > 0);
            }
        }
    }

    private static <T> T assertDecodes(byte[] raw, Class<T> type) {
        try {
            return type.cast(RnbdMsg.decode(ByteBuffer.wrap(raw)));
        } catch (ProtoException e) {
            throw new AssertionError(e);
        }
    }
}
