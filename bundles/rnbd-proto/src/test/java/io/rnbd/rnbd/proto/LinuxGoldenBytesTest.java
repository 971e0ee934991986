package io.rnbd.rnbd.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * Golden bytes produced by gcc 12 from the struct definitions of Linux 6.1.192's
 * drivers/block/rnbd/rnbd-proto.h (Debian's linux-source-6.1), copied verbatim with the
 * kernel types mapped to stdint and filled field by field as rnbd-clt.c and rnbd-srv.c
 * fill them; never by the encoder under test. Mainline renames OPEN_RSP's field at offset
 * 20 (max_write_same_sectors becomes max_write_zeroes_sectors) and op 5 (WRITE_SAME becomes
 * WRITE_ZEROES) and adds the flags PREFLUSH (1 << 10) and NOUNMAP (1 << 11): same layout.
 */
class LinuxGoldenBytesTest {
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replaceAll("\\s", ""));
    }

    private static byte[] encode(RnbdMsg m) {
        ByteBuffer b = m.toBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Test
    void sessInfoAsRnbdClt() throws Exception {
        byte[] linux = hex("00000000020000000000000000000000 00000000000000000000000000000000 00000000");
        assertArrayEquals(linux, encode(new SessInfo(2)));
        assertEquals(new SessInfo(2), RnbdMsg.decode(ByteBuffer.wrap(linux)));
    }

    @Test
    void openAsRnbdClt() throws Exception {
        byte[] linux = hex("0200000001002f6465762f72616d3000" + "00".repeat(264 - 16));
        assertArrayEquals(linux, encode(new Open(AccessMode.RW, "/dev/ram0")));
        assertEquals(new Open(AccessMode.RW, "/dev/ram0"), RnbdMsg.decode(ByteBuffer.wrap(linux)));
    }

    @Test
    void closeAsRnbdClt() throws Exception {
        byte[] linux = hex("0500000007000000");
        assertArrayEquals(linux, encode(new Close(7)));
    }

    /** rnbd_srv_fill_msg_open_rsp for a 64 MiB device with a write cache and FUA; 6.1 sends 0 at offset 20. */
    @Test
    void openRspAsRnbdSrv() throws Exception {
        byte[] linux = hex("03000000030000000000020000000000 ff00000000000000ffff3f0000100000"
                + " 00000000001000028000000000030000 0000000000000000");
        OpenRsp m = new OpenRsp(3, 131072, 255, 0, 0x3fffff, 4096, 0, 4096, 512, 128, false,
                OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK);
        assertArrayEquals(linux, encode(m));
        OpenRsp d = (OpenRsp) RnbdMsg.decode(ByteBuffer.wrap(linux));
        assertEquals(m, d);
        assertEquals(0, d.maxWriteZeroesSectors(), "a 6.1 server never offers op 5: the client must not send it");
        assertEquals(64L << 20, d.sizeBytes());
    }

    /** rnbd_client_xfer_request: a sync FUA write; prio in the 16 bits after bi_size, 6 bytes of padding. */
    @Test
    void ioAsRnbdClt() throws Exception {
        byte[] linux = hex("04000000030000009a78563412000000 01030000001000000340000000000000");
        Io m = new Io(3, 0x123456789aL, Io.OP_WRITE | Io.F_SYNC | Io.F_FUA, 4096, 0x4003);
        assertArrayEquals(linux, encode(m));
        assertEquals(m, RnbdMsg.decode(ByteBuffer.wrap(linux)));
    }

    /** Mainline's flags decode; the op-5 skew is settled by OPEN_RSP's offset 20, which 6.1 leaves 0. */
    @Test
    void mainlineFlagsAndOpFive() throws Exception {
        Io z = (Io) RnbdMsg.decode(ByteBuffer.wrap(hex("04000000030000000000000000000000 05080000001000000000000000000000")));
        assertEquals(Io.OP_WRITE_ZEROES, z.op());
        assertTrue(z.has(Io.F_NOUNMAP));
        Io f = (Io) RnbdMsg.decode(ByteBuffer.wrap(hex("04000000030000000000000000000000 01040000001000000000000000000000")));
        assertTrue(f.has(Io.F_PREFLUSH));
    }
}
