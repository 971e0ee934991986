package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MalformedInputTest {
    interface Decoder {
        Object decode(ByteBuffer b) throws ProtoException;
    }

    static final Decoder CON_REQ = ConReq::decode;
    static final Decoder CON_RSP = ConRsp::decode;
    static final List<Decoder> DECODERS = List.of(CON_REQ, CON_RSP, InfoReq::decode,
            InfoRsp::decode, RdmaWriteMsg::decode, RdmaReadMsg::decode, RkeyRsp::decode, AuthMsg::decode,
            FenceReq::decode, FenceRsp::decode, MsgType::peek);

    static byte[] conReq() {
        return Hex.encode(ConReq.SIZE, new ConReq(0, 1, 0, UUID.randomUUID(), UUID.randomUUID(), true, false)::encode);
    }

    static int errno(byte[] b, Decoder d) {
        return assertThrows(ProtoException.class, () -> d.decode(ByteBuffer.wrap(b))).errno();
    }

    /**
     * AUTH whose method fills all 16 bytes with no NUL: no encoder writes such a name (encode
     * refuses it), so the decoder must refuse it too. Found by RtrsProtoFuzzTest#messages:
     * it decoded, and re-encoding the record threw IllegalArgumentException.
     */
    @Test
    void authMethodWithoutItsNul() throws Exception {
        byte[] sixteen = Hex.bytes("0500 0000 00 00 0000 63686131313131313131313131313131");
        assertEquals(Errno.EINVAL, errno(sixteen, AuthMsg::decode));
        sixteen[AuthMsg.HEADER_SIZE - 1] = 0;
        assertEquals("cha111111111111", AuthMsg.decode(ByteBuffer.wrap(sixteen)).method(), "15 and a NUL still decode");
    }

    /**
     * INFO_REQ whose pathname fills all 255 bytes: Linux's client (strscpy) and our encoder
     * always leave a NUL, and encode refuses 255 characters, so the decoder refuses them
     * too. Found by RtrsProtoFuzzTest#messages in a 60 s run: it decoded, and re-encoding threw.
     */
    @Test
    void infoReqPathnameWithoutItsNul() throws Exception {
        byte[] full = new byte[InfoReq.SIZE];
        java.util.Arrays.fill(full, 2, 2 + Rtrs.NAME_MAX, (byte) 'a');
        assertEquals(Errno.EINVAL, errno(full, InfoReq::decode));
        full[2 + Rtrs.NAME_MAX - 1] = 0;
        assertEquals("a".repeat(Rtrs.NAME_MAX - 1), InfoReq.decode(ByteBuffer.wrap(full)).pathName(),
                "254 and a NUL still decode");
    }

    @Test
    void badMagic() {
        byte[] b = conReq();
        b[2] = 0x12;
        // as Linux's server (rtrs_rdma_connect) and client (rtrs_rdma_conn_established): ECONNRESET
        assertEquals(Errno.ECONNRESET, errno(b, ConReq::decode));
        byte[] r = Hex.encode(ConRsp.SIZE, ConRsp.accept(4, 4096, 4096, 0)::encode);
        r[0] = 0;
        assertEquals(Errno.ECONNRESET, errno(r, ConRsp::decode));
    }

    @Test
    void onlyMajorVersionMustMatch() throws Exception {
        byte[] b = conReq();
        b[4] = 0x07; // 2.7
        assertEquals(0x0207, ConReq.decode(ByteBuffer.wrap(b)).version());
        b[5] = 0x03; // 3.7
        assertEquals(Errno.ECONNRESET, errno(b, ConReq::decode));
    }

    @Test
    void shortBuffers() {
        for (Decoder d : DECODERS) {
            // the handshake records are refused as Linux refuses them: ECONNRESET
            int expected = d == CON_REQ || d == CON_RSP ? Errno.ECONNRESET : Errno.EBADMSG;
            assertEquals(expected, errno(new byte[1], d));
        }
        byte[] full = conReq();
        byte[] cut = new byte[55];
        System.arraycopy(full, 0, cut, 0, 55);
        assertEquals(Errno.ECONNRESET, errno(cut, ConReq::decode));
    }

    /** Linux's server reads neither the cma/ip version bytes nor the reserved ones: neither do we. */
    @Test
    void reservedBytesOfConReqAreIgnoredAsLinuxDoes() throws Exception {
        byte[] b = conReq();
        b[0] = 4;
        b[1] = 6;
        b[50] = 1;
        b[44] |= 0x02;
        ConReq d = ConReq.decode(ByteBuffer.wrap(b));
        assertEquals(true, d.firstConn());
        assertEquals(false, d.extensions());
    }

    @Test
    void tooManyConnectionsPerPath() {
        byte[] b = conReq();
        b[8] = 0x01; // cid_num 4097
        b[9] = 0x10;
        assertEquals(Errno.ECONNRESET, errno(b, ConReq::decode));
    }

    @Test
    void impossibleCounts() {
        // INFO_RSP claiming 3 descriptors but carrying 1
        byte[] info = Hex.bytes("0100 0300 00000000 1000000000000000 07000000 00200000");
        assertEquals(Errno.EBADMSG, errno(info, InfoRsp::decode));
        assertEquals(Errno.EINVAL, errno(Hex.bytes("0100 0000 00000000"), InfoRsp::decode));
        // RDMA_READ with 129 segments
        assertEquals(Errno.EINVAL, errno(Hex.bytes("0300 0000 0000 8100 z4000"), RdmaReadMsg::decode));
        // descriptor length above 2 GiB
        assertEquals(Errno.EINVAL, errno(Hex.bytes("0300 0000 0000 0100 z12 00000080"), RdmaReadMsg::decode));
        // AUTH claiming more than 4 KiB
        assertEquals(Errno.EMSGSIZE, errno(Hex.bytes("0500 0000 00 00 0110 z16"), AuthMsg::decode));
        // AUTH claiming more than it carries
        assertEquals(Errno.EBADMSG, errno(Hex.bytes("0500 0000 00 00 0500 z16 0102"), AuthMsg::decode));
        // CON_REQ with cid >= cid_num
        byte[] b = conReq();
        b[6] = 1;
        assertEquals(Errno.ECONNRESET, errno(b, ConReq::decode));
        // CON_RSP accepting with queue depth 0
        byte[] r = Hex.bytes("bd1b 0002 0000 0000 00100000 00100000 00000000 z36");
        assertEquals(Errno.ECONNRESET, errno(r, ConRsp::decode));
        byte[] pos = Hex.bytes("bd1b 0002 1000 0000 z48");
        assertEquals(Errno.ECONNRESET, errno(pos, ConRsp::decode));
    }

    @Test
    void wrongOrUnknownType() {
        assertEquals(Errno.EPROTO, errno(Hex.bytes("0400 0500 04030201"), RdmaWriteMsg::decode));
        assertEquals(Errno.EPROTO, errno(Hex.bytes("6300"), MsgType::peek));
        assertThrows(ProtoException.class, () -> Imm.checkedType(0x50000000));
    }

    @Test
    void randomGarbageOnlyEverThrowsProtoException() {
        Random rnd = new Random(42);
        for (int i = 0; i < 20000; i++) {
            byte[] b = new byte[rnd.nextInt(300)];
            rnd.nextBytes(b);
            if (b.length > 1 && rnd.nextBoolean()) {
                b[0] = (byte) rnd.nextInt(8);
                b[1] = 0;
            }
            for (Decoder d : DECODERS) {
                try {
                    d.decode(ByteBuffer.wrap(b));
                } catch (ProtoException expected) {
                    // the only allowed failure
                }
            }
        }
    }
}
