package io.rnbd.rtrs.proto;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class GoldenBytesTest {
    static final UUID SESS = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
    static final UUID PATH = UUID.fromString("ffeeddcc-bbaa-9988-7766-554433221100");

    @Test
    void conReq() throws Exception {
        ConReq m = new ConReq(1, 3, 2, SESS, PATH, true);
        byte[] hex = Hex.bytes("0000 bd1b 0002 0100 0300 0200 00112233445566778899aabbccddeeff"
                + " ffeeddccbbaa99887766554433221100 01 z11");
        assertEquals(ConReq.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(ConReq.SIZE, m::encode));
        ByteBuffer in = Hex.buf(hex);
        assertEquals(m, ConReq.decode(in));
        assertEquals(0, in.remaining());
    }

    @Test
    void conRspAccept() throws Exception {
        ConRsp m = ConRsp.accept(512, 126976, 4096, ConRsp.NEW_RKEY_F | ConRsp.AUTH_F);
        byte[] hex = Hex.bytes("bd1b 0002 0000 0002 00f00100 00100000 01010000 z36");
        assertEquals(ConRsp.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(ConRsp.SIZE, m::encode));
        assertEquals(m, ConRsp.decode(Hex.buf(hex)));
    }

    @Test
    void conRspRefuseCarriesNegativeErrno() throws Exception {
        ConRsp m = ConRsp.refuse(16, true);
        byte[] hex = Hex.bytes("bd1b 0002 f0ff 0000 00000000 00000000 00020000 z36");
        assertArrayEquals(hex, Hex.encode(ConRsp.SIZE, m::encode));
        ConRsp d = ConRsp.decode(Hex.buf(hex));
        assertEquals(16, d.errno());
        assertEquals(true, d.has(ConRsp.DNR_F));
    }

    @Test
    void infoReq() throws Exception {
        InfoReq m = new InfoReq("ab");
        byte[] hex = Hex.bytes("0000 6162 z268");
        assertEquals(InfoReq.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(InfoReq.SIZE, m::encode));
        assertEquals(m, InfoReq.decode(Hex.buf(hex)));
    }

    @Test
    void infoRsp() throws Exception {
        InfoRsp m = new InfoRsp(List.of(new SgDesc(0x1122334455667788L, 0xdeadbeef, 0x20000),
                new SgDesc(0x10, 7, 8192)));
        byte[] hex = Hex.bytes("0100 0200 00000000"
                + " 8877665544332211 efbeadde 00000200"
                + " 1000000000000000 07000000 00200000");
        assertEquals(m.size(), hex.length);
        assertArrayEquals(hex, Hex.encode(m.size(), m::encode));
        assertEquals(m, InfoRsp.decode(Hex.buf(hex)));
    }

    @Test
    void rdmaWrite() throws Exception {
        RdmaWriteMsg m = new RdmaWriteMsg(300);
        byte[] hex = Hex.bytes("0200 2c01");
        assertArrayEquals(hex, Hex.encode(RdmaWriteMsg.SIZE, m::encode));
        assertEquals(m, RdmaWriteMsg.decode(Hex.buf(hex)));
    }

    @Test
    void rdmaRead() throws Exception {
        RdmaReadMsg m = new RdmaReadMsg(16, RdmaReadMsg.NEED_INVAL_F, List.of(new SgDesc(0x1000, 0x55, 4096)));
        byte[] hex = Hex.bytes("0300 1000 0100 0100 0010000000000000 55000000 00100000");
        assertArrayEquals(hex, Hex.encode(m.size(), m::encode));
        assertEquals(m, RdmaReadMsg.decode(Hex.buf(hex)));
    }

    @Test
    void rkeyRsp() throws Exception {
        RkeyRsp m = new RkeyRsp(5, 0x01020304);
        byte[] hex = Hex.bytes("0400 0500 04030201");
        assertArrayEquals(hex, Hex.encode(RkeyRsp.SIZE, m::encode));
        assertEquals(m, RkeyRsp.decode(Hex.buf(hex)));
    }

    @Test
    void auth() throws Exception {
        AuthMsg m = AuthMsg.step("chap", new byte[] {1, 2, 3}, true);
        byte[] hex = Hex.bytes("0500 0000 01 00 0300 63686170 z12 010203");
        assertArrayEquals(hex, Hex.encode(m.size(), m::encode));
        assertEquals(m, AuthMsg.decode(Hex.buf(hex)));
        AuthMsg f = AuthMsg.failure("chap", 129, true);
        assertArrayEquals(Hex.bytes("0500 8100 02 00 0000 63686170 z12"), Hex.encode(f.size(), f::encode));
    }

    @Test
    void fence() throws Exception {
        FenceReq q = new FenceReq(7, PATH, 0x102);
        byte[] hex = Hex.bytes("0600 0201 07000000 ffeeddccbbaa99887766554433221100");
        assertArrayEquals(hex, Hex.encode(FenceReq.SIZE, q::encode));
        assertEquals(q, FenceReq.decode(Hex.buf(hex)));
        FenceRsp r = new FenceRsp(7, 0, 3, 1);
        byte[] rhex = Hex.bytes("0700 0000 07000000 03000000 01000000");
        assertArrayEquals(rhex, Hex.encode(FenceRsp.SIZE, r::encode));
        assertEquals(r, FenceRsp.decode(Hex.buf(rhex)));
    }

    @Test
    void imm() throws Exception {
        assertEquals(0x10280005, Imm.ioRsp(5, 5, false));
        assertEquals(0x20280005, Imm.ioRsp(5, 5, true));
        assertEquals(5, Imm.rspMsgId(0x10280005));
        assertEquals(5, Imm.rspErrno(0x10280005));
        assertEquals(129, Imm.rspErrno(Imm.ioRsp(0x7ffff, 129, false)));
        assertEquals(0x7ffff, Imm.rspMsgId(Imm.ioRsp(0x7ffff, 129, false)));
        assertEquals(19, Imm.offsetBits(512));
        assertEquals(27, Imm.offsetBits(1));
        assertEquals(12, Imm.offsetBits(65535));
        assertEquals(0x00181234, Imm.ioReq(3, 0x1234, 19));
        assertEquals(3, Imm.reqBufId(0x00181234, 19));
        assertEquals(0x1234, Imm.reqOffset(0x00181234, 19));
        assertEquals(0x80000000, Imm.hbMsg());
        assertEquals(0x90000000, Imm.hbAck());
        assertEquals(Imm.HB_ACK, Imm.checkedType(Imm.hbAck()));
        assertEquals(true, Imm.fits(512, 128 * 1024));
        assertEquals(false, Imm.fits(65535, 8192));
    }
}
