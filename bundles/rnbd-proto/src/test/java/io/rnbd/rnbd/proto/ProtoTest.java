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
        byte[] hugeSector = ok.clone();
        hugeSector[15] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(hugeSector));
        byte[] hugeSize = ok.clone();
        hugeSize[23] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(hugeSize));
    }

    /** As Linux's rnbd_to_bio_flags: an op or flag a newer peer adds is no malformed message. */
    @Test
    void unknownOpsAndFlagsDecodeAndSayWhatIsUnknown() {
        byte[] ok = valid(Io.of(1, 0, Io.OP_READ, 0, 512));
        byte[] newOp = ok.clone();
        newOp[16] = 6;
        Io op = assertDecodes(newOp, Io.class);
        assertEquals(6, op.op());
        assertEquals(false, op.knownOp());
        assertEquals(0, op.unknownFlags());
        byte[] newFlag = ok.clone();
        newFlag[17] = 0x10;
        newFlag[19] = (byte) 0x80;
        Io flag = assertDecodes(newFlag, Io.class);
        assertTrue(flag.knownOp());
        assertEquals(Io.OP_READ, flag.op());
        assertEquals(0x8000_1000, flag.unknownFlags());
        Io known = Io.of(1, 0, Io.OP_WRITE_ZEROES, Io.F_ALL, 512);
        assertEquals(0, known.unknownFlags());
        assertTrue(known.knownOp());
    }

    @Test
    void malformedOpenRsp() {
        byte[] ok = valid(new OpenRsp(1, 8, 8, 0, 0, 0, 0, 4096, 512, 1, false, 0));
        byte[] oddBlock = ok.clone();
        oddBlock[38] = 0x01;
        oddBlock[39] = 0x03; // 769
        assertEquals(Errno.EINVAL, errnoOf(oddBlock));
        byte[] noBlock = ok.clone();
        noBlock[38] = 0;
        noBlock[39] = 0; // rnbd-clt.c process_msg_open_rsp's one check
        assertEquals(Errno.EINVAL, errnoOf(noBlock));
        byte[] oddPhysical = ok.clone();
        oddPhysical[36] = 0;
        oddPhysical[37] = 0x06; // 1536 >= 512, not a power of two: blk_validate_limits refuses it
        assertEquals(Errno.EINVAL, errnoOf(oddPhysical));
        byte[] negSectors = ok.clone();
        negSectors[15] = (byte) 0x80;
        assertEquals(Errno.EINVAL, errnoOf(negSectors));
    }

    /** What Linux's client and block layer take, ours takes: no refusal where Linux maps the device. */
    @Test
    void openRspDecodesAsLinuxsClientReadsIt() {
        byte[] ok = valid(new OpenRsp(1, 8, 8, 0, 0, 0, 0, 4096, 512, 1, false, 0));
        byte[] physSmaller = ok.clone();
        physSmaller[36] = 0;
        physSmaller[37] = 0x02; // physical 512 under a logical 1024: the block layer takes 1024
        physSmaller[39] = 0x04;
        OpenRsp p = assertDecodes(physSmaller, OpenRsp.class);
        assertEquals(1024, p.effectivePhysicalBlockSize());
        byte[] newCache = ok.clone();
        newCache[45] = (byte) 0x86;
        OpenRsp c = assertDecodes(newCache, OpenRsp.class);
        assertEquals(0x84, c.unknownCachePolicyBits());
        assertEquals(OpenRsp.CACHE_WRITEBACK, c.cachePolicy() & OpenRsp.CACHE_KNOWN);
        byte[] allOnes = ok.clone();
        java.util.Arrays.fill(allOnes, 16, 36, (byte) 0xff); // every u32 limit UINT_MAX
        OpenRsp u = assertDecodes(allOnes, OpenRsp.class);
        assertEquals(0xffff_ffffL, u.maxHwSectors());
        assertEquals(0xffff_ffffL, u.maxWriteZeroesSectors());
        assertEquals(0xffff_ffffL, u.maxDiscardSectors());
        assertEquals(0xffff_ffffL, u.discardGranularity());
        assertEquals(0xffff_ffffL, u.discardAlignment());
        assertArrayEquals(allOnes, valid(u), "u32 limits go back out as they came");
        byte[] secure = ok.clone();
        secure[42] = (byte) 0xff;
        secure[43] = (byte) 0xff;
        assertTrue(assertDecodes(secure, OpenRsp.class).secureDiscard());
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
