package io.rnbd.rtrs.proto;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Golden bytes. The Linux ones were produced by gcc 12 from the struct definitions of Linux
 * 6.1.192's drivers/infiniband/ulp/rtrs/rtrs-pri.h (Debian's linux-source-6.1), copied
 * verbatim with the kernel types mapped to stdint, filled field by field as the named
 * kernel function fills them; never by the encoder under test. rtrs-pri.h is unchanged in
 * mainline for every record here. The extension records (AUTH, FENCE) are this project's
 * own and checked against their documented layout.
 */
class GoldenBytesTest {
    static final UUID SESS = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
    static final UUID PATH = UUID.fromString("ffeeddcc-bbaa-9988-7766-554433221100");

    /**
     * rtrs_rdma_route_resolved: magic, version, cid 1, cid_num 3, recon_cnt 2, first_conn;
     * sess_uuid = the path's uuid, paths_uuid = the session's.
     */
    static final String LINUX_CONN_REQ = "0000bd1b0002010003000200ffeeddcc bbaa9988776655443322110000112233"
            + " 445566778899aabbccddeeff01000000 0000000000000000";
    /** rtrs_rdma_do_accept with always_invalidate: queue depth 512, 128 KiB chunks, NEW_RKEY_F. */
    static final String LINUX_CONN_RSP = "bd1b00020000000200f0010000100000 02 z39";
    /** rtrs_rdma_do_reject(cm_id, -EBUSY). */
    static final String LINUX_CONN_REJ = "bd1b0002f0ff z50";

    @Test
    void conReqIsLinuxs() throws Exception {
        ConReq m = new ConReq(1, 3, 2, PATH, SESS, true, false);
        byte[] hex = Hex.bytes(LINUX_CONN_REQ);
        assertEquals(ConReq.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(ConReq.SIZE, m::encode));
        ByteBuffer in = Hex.buf(hex);
        assertEquals(m, ConReq.decode(in));
        assertEquals(0, in.remaining());
    }

    @Test
    void conReqExtensionBitIsLinuxsReservedBit7() throws Exception {
        ConReq m = new ConReq(0, 2, 1, PATH, SESS, false, true);
        byte[] b = Hex.encode(ConReq.SIZE, m::encode);
        assertEquals((byte) 0x80, b[44], "first_conn is bit 0 of byte 44, the extension bit the top reserved bit");
        assertEquals(m, ConReq.decode(Hex.buf(b)));
    }

    @Test
    void conReqDecodeTakesTheFirst56BytesOfLongerPrivateData() throws Exception {
        byte[] longer = new byte[92];
        System.arraycopy(Hex.bytes(LINUX_CONN_REQ), 0, longer, 0, ConReq.SIZE);
        longer[60] = 0x7f;
        assertEquals(new ConReq(1, 3, 2, PATH, SESS, true, false), ConReq.decode(longer));
    }

    @Test
    void conRspAcceptIsLinuxs() throws Exception {
        ConRsp m = ConRsp.accept(512, 126976, 4096, ConRsp.NEW_RKEY_F);
        byte[] hex = Hex.bytes(LINUX_CONN_RSP);
        assertEquals(ConRsp.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(ConRsp.SIZE, m::encode));
        assertEquals(m, ConRsp.decode(Hex.buf(hex)));
        assertEquals(128 * 1024, m.chunkSize());
    }

    @Test
    void conRspRejectIsLinuxs() throws Exception {
        ConRsp m = ConRsp.refuse(16, false);
        byte[] hex = Hex.bytes(LINUX_CONN_REJ);
        assertArrayEquals(hex, Hex.encode(ConRsp.SIZE, m::encode));
        ConRsp d = ConRsp.decode(Hex.buf(hex));
        assertEquals(16, d.errno());
        assertEquals(false, d.has(ConRsp.DNR_F));
    }

    @Test
    void conRspExtensionFlagsAreBitsLinuxNeverSets() throws Exception {
        ConRsp m = ConRsp.accept(512, 126976, 4096, ConRsp.NEW_RKEY_F | ConRsp.AUTH_F | ConRsp.EXT_F);
        byte[] hex = Hex.bytes("bd1b00020000000200f0010000100000 02050000 z36");
        assertArrayEquals(hex, Hex.encode(ConRsp.SIZE, m::encode));
        assertArrayEquals(Hex.bytes("bd1b 0002 f0ff 0000 00000000 00000000 00020000 z36"),
                Hex.encode(ConRsp.SIZE, ConRsp.refuse(16, true)::encode));
    }

    /** rtrs_send_path_info: the session name in pathname, the rest zero (272 bytes). */
    @Test
    void infoReqIsLinuxs() throws Exception {
        InfoReq m = new InfoReq("ab");
        byte[] hex = Hex.bytes("0000 6162 z268");
        assertEquals(InfoReq.SIZE, hex.length);
        assertArrayEquals(hex, Hex.encode(InfoReq.SIZE, m::encode));
        assertEquals(m, InfoReq.decode(Hex.buf(hex)));
    }

    /** process_info_req: sg_cnt 2, one 128 KiB chunk and one region of 512 chunks (always_invalidate off). */
    @Test
    void infoRspIsLinuxs() throws Exception {
        InfoRsp m = new InfoRsp(List.of(new SgDesc(0x1122334455667788L, 0xdeadbeef, 0x20000),
                new SgDesc(0x10, 7, 512 * 0x20000)));
        byte[] hex = Hex.bytes("01000200000000008877665544332211 efbeadde000002001000000000000000"
                + " 0700000000000004");
        assertEquals(m.size(), hex.length);
        assertArrayEquals(hex, Hex.encode(m.size(), m::encode));
        assertEquals(m, InfoRsp.decode(Hex.buf(hex)));
    }

    /** rtrs_clt_read_req with a fast-registered region: NEED_INVAL, one descriptor. */
    @Test
    void rdmaReadIsLinuxs() throws Exception {
        RdmaReadMsg m = new RdmaReadMsg(32, RdmaReadMsg.NEED_INVAL_F, List.of(new SgDesc(0xffff888012345000L,
                0x1234abcd, 4096)));
        byte[] hex = Hex.bytes("0300200001000100005034128088ffff cdab341200100000");
        assertArrayEquals(hex, Hex.encode(m.size(), m::encode));
        assertEquals(m, RdmaReadMsg.decode(Hex.buf(hex)));
    }

    @Test
    void rdmaWriteIsLinuxs() throws Exception {
        RdmaWriteMsg m = new RdmaWriteMsg(32);
        byte[] hex = Hex.bytes("02002000");
        assertArrayEquals(hex, Hex.encode(RdmaWriteMsg.SIZE, m::encode));
        assertEquals(m, RdmaWriteMsg.decode(Hex.buf(hex)));
    }

    /** rdma_write_sg / send_io_resp_imm under always_invalidate: buf_id 511, the new rkey. */
    @Test
    void rkeyRspIsLinuxs() throws Exception {
        RkeyRsp m = new RkeyRsp(511, 0x00abcd02);
        byte[] hex = Hex.bytes("0400ff0102cdab00");
        assertArrayEquals(hex, Hex.encode(RkeyRsp.SIZE, m::encode));
        assertEquals(m, RkeyRsp.decode(Hex.buf(hex)));
    }

    /** rtrs_to_imm, rtrs_to_io_rsp_imm, rtrs_from_io_rsp_imm (rtrs-pri.h), values from gcc. */
    @Test
    void immIsLinuxs() throws Exception {
        assertEquals(0x00181234, Imm.ioReq(3, 0x1234, 19), "buf 3 at mem_bits 19 (queue depth 512), offset 0x1234");
        assertEquals(0x100001ff, Imm.ioRsp(511, 0, false));
        assertEquals(0x202fffff, Imm.ioRsp(0x7ffff, 5, true), "-EIO, with invalidation");
        assertEquals(0x10e00005, Imm.ioRsp(5, 28, false), "-ENOSPC");
        assertEquals(0x80000000, Imm.hbMsg());
        assertEquals(0x90000000, Imm.hbAck());
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
    void immFields() throws Exception {
        assertEquals(0x10280005, Imm.ioRsp(5, 5, false));
        assertEquals(0x20280005, Imm.ioRsp(5, 5, true));
        assertEquals(5, Imm.rspMsgId(0x10280005));
        assertEquals(5, Imm.rspErrno(0x10280005));
        assertEquals(129, Imm.rspErrno(Imm.ioRsp(0x7ffff, 129, false)));
        assertEquals(0x7ffff, Imm.rspMsgId(Imm.ioRsp(0x7ffff, 129, false)));
        assertEquals(19, Imm.offsetBits(512));
        assertEquals(28, Imm.offsetBits(1), "Linux: ilog2(0) + 1 = 0 id bits at queue depth 1");
        assertEquals(27, Imm.offsetBits(2));
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
