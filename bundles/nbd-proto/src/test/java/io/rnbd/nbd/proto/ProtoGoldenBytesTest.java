package io.rnbd.nbd.proto;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Every record against hand-written bytes from doc/proto.md, both directions. The bytes are
 * typed from the spec's field lists (sizes, order, the magics and values it names; network
 * byte order), never produced by our encoders: each test names the section it follows.
 */
class ProtoGoldenBytesTest {
    private static final long HANDLE = 0x0102030405060708L;

    private static ByteBuffer hex(String s) {
        return ByteBuffer.wrap(HexFormat.of().parseHex(s.replace(" ", "")));
    }

    private static String hexOf(ByteBuffer b) {
        b.flip();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return HexFormat.of().formatHex(a);
    }

    private static String clean(String s) {
        return s.replace(" ", "");
    }

    // "Newstyle negotiation": NBDMAGIC, IHAVEOPT, 16-bit handshake flags (FIXED_NEWSTYLE 1, NO_ZEROES 2).
    @Test
    void serverGreeting() throws Exception {
        String golden = "4e42444d41474943 49484156454f5054 0003";
        ByteBuffer b = ByteBuffer.allocate(ServerGreeting.SIZE);
        new ServerGreeting(NbdConstants.FLAG_FIXED_NEWSTYLE | NbdConstants.FLAG_NO_ZEROES).encode(b);
        assertEquals(clean(golden), hexOf(b));
        assertEquals(new ServerGreeting(3), ServerGreeting.decode(hex(golden)));
    }

    // "Newstyle negotiation": 32-bit client flags (C_FIXED_NEWSTYLE bit 0, C_NO_ZEROES bit 1).
    @Test
    void clientFlags() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(ClientFlags.SIZE);
        new ClientFlags(NbdConstants.FLAG_C_FIXED_NEWSTYLE | NbdConstants.FLAG_C_NO_ZEROES).encode(b);
        assertEquals("00000003", hexOf(b));
        assertTrue(ClientFlags.decode(hex("00000002")).has(NbdConstants.FLAG_C_NO_ZEROES));
    }

    // "Newstyle negotiation": IHAVEOPT, 32-bit option (NBD_OPT_GO is 7), 32-bit data length.
    @Test
    void optionHeader() throws Exception {
        String golden = "49484156454f5054 00000007 0000000c";
        ByteBuffer b = ByteBuffer.allocate(OptionHeader.SIZE);
        new OptionHeader(NbdConstants.OPT_GO, 12).encode(b);
        assertEquals(clean(golden), hexOf(b));
        assertEquals(new OptionHeader(7, 12), OptionHeader.decode(hex(golden)));
        assertEquals(0xFFFF_FFFFL, OptionHeader.decode(hex("49484156454f5054 00000001 ffffffff")).length());
    }

    // "Fixed newstyle negotiation": magic 0x3e889045565a9, option, reply type, length;
    // "Option reply types": NBD_REP_ERR_UNSUP 2^31 + 1, ERR_INVALID 2^31 + 3, ERR_UNKNOWN 2^31 + 6.
    @Test
    void optionReplyHeader() throws Exception {
        String golden = "0003e889045565a9 00000007 80000001 00000005";
        ByteBuffer b = ByteBuffer.allocate(OptionReplyHeader.SIZE);
        new OptionReplyHeader(NbdConstants.OPT_GO, NbdConstants.REP_ERR_UNSUP, 5).encode(b);
        assertEquals(clean(golden), hexOf(b));
        OptionReplyHeader h = OptionReplyHeader.decode(hex(golden));
        assertEquals(new OptionReplyHeader(7, 0x80000001, 5), h);
        assertTrue(h.isError());
        assertEquals(0x80000006, NbdConstants.REP_ERR_UNKNOWN);
        assertEquals(0x80000003, NbdConstants.REP_ERR_INVALID);
    }

    // "Newstyle negotiation", NBD_OPT_EXPORT_NAME's reply: 64-bit size, 16-bit transmission flags,
    // 124 zero bytes unless NBD_FLAG_C_NO_ZEROES.
    @Test
    void exportNameReplyWithAndWithoutZeroes() throws Exception {
        String golden = "0000000000100000 0103";
        ByteBuffer b = ByteBuffer.allocate(ExportNameReply.SIZE + ExportNameReply.ZEROES);
        new ExportNameReply(1 << 20, 0x0103).encode(b, true);
        assertEquals(clean(golden), hexOf(b));
        b.clear();
        new ExportNameReply(1 << 20, 0x0103).encode(b, false);
        assertEquals(clean(golden) + "00".repeat(124), hexOf(b));
        assertEquals(new ExportNameReply(1 << 20, 0x0103), ExportNameReply.decode(hex(golden)));
    }

    // "Option types", NBD_OPT_INFO and NBD_OPT_GO: 32-bit name length, name, 16-bit count of
    // information requests, 16 bits each (NBD_INFO_NAME 1, NBD_INFO_BLOCK_SIZE 3).
    @Test
    void goRequest() throws Exception {
        String golden = "00000002 6162 0002 0003 0001";
        GoRequest g = new GoRequest("ab", new int[] {NbdConstants.INFO_BLOCK_SIZE, NbdConstants.INFO_NAME});
        ByteBuffer b = ByteBuffer.allocate(g.encodedSize());
        g.encode(b);
        assertEquals(clean(golden), hexOf(b));
        GoRequest d = GoRequest.decode(hex(golden));
        assertEquals(g, d);
        assertTrue(d.requested(NbdConstants.INFO_NAME));
        assertFalse(d.requested(NbdConstants.INFO_DESCRIPTION));
        assertEquals(new GoRequest("", new int[0]), GoRequest.decode(hex("00000000 0000")));
    }

    // "Option reply types", NBD_REP_INFO: 16-bit information type, then NBD_INFO_EXPORT (0: 64-bit
    // size, 16-bit flags), NBD_INFO_NAME (1), NBD_INFO_DESCRIPTION (2), NBD_INFO_BLOCK_SIZE (3:
    // minimum, preferred, maximum, 32 bits each).
    @Test
    void infoReplies() throws Exception {
        assertInfo("0000 0000000000100000 0001", new Info.Export(1 << 20, 1));
        assertInfo("0003 00000200 00001000 02000000", new Info.BlockSize(512, 4096, 32 << 20));
        assertInfo("0001 6162", new Info.Name("ab"));
        assertInfo("0002 78", new Info.Description("x"));
        assertEquals(new Info.Unknown(9), Info.decode(hex("0009 aabbcc")));
    }

    private static void assertInfo(String golden, Info info) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(info.encodedSize());
        info.encode(b);
        assertEquals(clean(golden), hexOf(b));
        assertEquals(info, Info.decode(hex(golden)));
    }

    // "Option reply types", NBD_REP_SERVER: 32-bit name length, name, the rest a description.
    @Test
    void serverEntry() throws Exception {
        String golden = "00000002 6162 64";
        ServerEntry e = new ServerEntry("ab", "d");
        ByteBuffer b = ByteBuffer.allocate(e.encodedSize());
        e.encode(b);
        assertEquals(clean(golden), hexOf(b));
        assertEquals(e, ServerEntry.decode(hex(golden)));
    }

    // "Request message": magic 0x25609513, 16-bit command flags (FUA bit 0), 16-bit type
    // (NBD_CMD_WRITE 1), 64-bit handle, 64-bit offset, 32-bit length.
    @Test
    void request() throws Exception {
        String golden = "25609513 0001 0001 0102030405060708 0000000000001000 00000200";
        ByteBuffer b = ByteBuffer.allocate(Request.SIZE);
        new Request(NbdConstants.CMD_FLAG_FUA, NbdConstants.CMD_WRITE, HANDLE, 0x1000, 0x200).encode(b);
        assertEquals(clean(golden), hexOf(b));
        Request r = Request.decode(hex(golden));
        assertEquals(new Request(1, 1, HANDLE, 0x1000, 0x200), r);
        assertTrue(r.has(NbdConstants.CMD_FLAG_FUA));
        assertEquals(0xFFFF_FFFFL,
                Request.decode(hex("25609513 0000 0000 0000000000000000 0000000000000000 ffffffff")).length());
    }

    // "Simple reply message": magic 0x67446698, 32-bit error ("Error values": EINVAL 22), handle.
    @Test
    void simpleReply() throws Exception {
        String golden = "67446698 00000016 0102030405060708";
        ByteBuffer b = ByteBuffer.allocate(SimpleReply.SIZE);
        new SimpleReply(NbdConstants.EINVAL, HANDLE).encode(b);
        assertEquals(clean(golden), hexOf(b));
        assertEquals(new SimpleReply(22, HANDLE), SimpleReply.decode(hex(golden)));
    }

    // "Structured reply chunk message": magic 0x668e33ef, 16-bit flags (DONE bit 0), 16-bit type
    // (NBD_REPLY_TYPE_OFFSET_DATA 1), handle, 32-bit length; "Structured reply types",
    // NBD_REPLY_TYPE_ERROR (2^15 + 1): 32-bit error, 16-bit message length, message.
    @Test
    void structuredReplyAndError() throws Exception {
        String golden = "668e33ef 0001 0001 0102030405060708 00000208";
        ByteBuffer b = ByteBuffer.allocate(StructuredReplyHeader.SIZE);
        new StructuredReplyHeader(NbdConstants.REPLY_FLAG_DONE, NbdConstants.REPLY_TYPE_OFFSET_DATA, HANDLE, 0x208)
                .encode(b);
        assertEquals(clean(golden), hexOf(b));
        StructuredReplyHeader h = StructuredReplyHeader.decode(hex(golden));
        assertTrue(h.done());
        assertEquals(0x208, h.length());

        String err = "00000016 0001 78";
        StructuredError e = new StructuredError(NbdConstants.EINVAL, "x");
        ByteBuffer eb = ByteBuffer.allocate(e.encodedSize());
        e.encode(eb);
        assertEquals(clean(err), hexOf(eb));
        assertEquals(e, StructuredError.decode(hex(err)));
        assertEquals(0x8001, NbdConstants.REPLY_TYPE_ERROR);
        // Long messages are cut to keep reply headers small, on a UTF-8 boundary.
        StructuredError longOne = new StructuredError(5, "é".repeat(150));
        assertEquals(6 + 200, longOne.encodedSize());
    }

    @Test
    void malformedInputThrowsTypedExceptions() {
        assertProto(() -> Request.decode(hex("25609514 0000 0000 0000000000000000 0000000000000000 00000000")));
        assertProto(() -> Request.decode(hex("25609513 0000")));
        assertProto(() -> SimpleReply.decode(hex("668e33ef 00000000 0000000000000000")));
        assertProto(() -> StructuredReplyHeader.decode(hex("67446698 0001 0001 0102030405060708 00000208")));
        assertProto(() -> OptionHeader.decode(hex("4e42444d41474943 00000007 00000000")));
        assertProto(() -> OptionReplyHeader.decode(hex("49484156454f5054 00000007 00000001 00000000")));
        assertProto(() -> OptionReplyHeader.decode(hex("0003e889045565a9 00000007 00000001 ffffffff")));
        // Oldstyle server: NBDMAGIC then cliserv_magic.
        assertProto(() -> ServerGreeting.decode(hex("4e42444d41474943 0000420281861253 0000")));
        assertProto(() -> GoRequest.decode(hex("00000009 6162 0000")));
        assertProto(() -> GoRequest.decode(hex("00000002 6162 0001")));
        assertProto(() -> GoRequest.decode(hex("00000002 6162 0000 00")));
        assertProto(() -> GoRequest.decode(hex("00000002 ff61 0000")));
        assertProto(() -> GoRequest.decode(hex("00000002 0061 0000")));
        assertProto(() -> Info.decode(hex("0000 0000000000100000")));
        assertProto(() -> Info.decode(hex("0000 0000000000100000 0000")));
        assertProto(() -> Info.decode(hex("0003 00000200 00001000")));
        assertProto(() -> ServerEntry.decode(hex("00000005 6162")));
        assertProto(() -> StructuredError.decode(hex("00000000 0000")));
        assertProto(() -> StructuredError.decode(hex("00000016 0009 78")));
        assertProto(() -> ExportNameReply.decode(hex("8000000000000000 0001")));
    }

    @Test
    void randomBytesNeverEscapeAsOtherExceptions() {
        Random rnd = new Random(7);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[rnd.nextInt(40)];
            rnd.nextBytes(b);
            if (b.length >= 4 && rnd.nextBoolean()) {
                // Sometimes a right magic, so decoding gets past the first check.
                ByteBuffer.wrap(b).putInt(rnd.nextBoolean() ? NbdConstants.REQUEST_MAGIC : NbdConstants.SIMPLE_REPLY_MAGIC);
            }
            for (Decoder d : new Decoder[] {
                    x -> Request.decode(x), x -> SimpleReply.decode(x), x -> StructuredReplyHeader.decode(x),
                    x -> OptionHeader.decode(x), x -> OptionReplyHeader.decode(x), x -> ServerGreeting.decode(x),
                    x -> GoRequest.decode(x), x -> Info.decode(x), x -> ServerEntry.decode(x),
                    x -> StructuredError.decode(x), x -> ExportNameReply.decode(x), x -> ClientFlags.decode(x)}) {
                try {
                    d.decode(ByteBuffer.wrap(b));
                } catch (NbdProtoException expected) {
                    assertNotNull(expected.getMessage());
                } catch (RuntimeException e) {
                    fail("decoder threw " + e + " on " + HexFormat.of().formatHex(b));
                }
            }
        }
    }

    interface Decoder {
        Object decode(ByteBuffer b) throws NbdProtoException;
    }

    interface Thrower {
        Object run() throws NbdProtoException;
    }

    private static void assertProto(Thrower t) {
        assertThrows(NbdProtoException.class, t::run);
    }
}
