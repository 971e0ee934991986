package io.rnbd.rnbd.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The several-servers extension lives only in bytes Linux's rnbd-proto.h reserves (SESS_INFO's
 * and SESS_INFO_RSP's reserved[0], OPEN's resv1, OPEN_RSP's reserved[0..5]): with it off every
 * record is Linux's byte for byte (the golden bytes, {@link LinuxGoldenBytesTest}), and Linux's
 * records decode as "off".
 */
class HaExtensionTest {
    private static byte[] bytes(RnbdMsg m) {
        ByteBuffer b = m.toBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replaceAll("\\s", ""));
    }

    @Test
    void sessInfoCarriesTheFlagInItsFirstReservedByteOnly() throws Exception {
        byte[] linux = hex("00000000020000000000000000000000 00000000000000000000000000000000 00000000");
        byte[] ext = bytes(new SessInfo(2, true));
        byte[] expected = linux.clone();
        expected[5] = 1;
        assertArrayEquals(expected, ext);
        assertEquals(new SessInfo(2, true), RnbdMsg.decode(ByteBuffer.wrap(ext)));
        assertFalse(((SessInfo) RnbdMsg.decode(ByteBuffer.wrap(linux))).ha());
        assertArrayEquals(linux, bytes(new SessInfo(2, false)));
    }

    @Test
    void sessInfoRspLikewise() throws Exception {
        byte[] ext = bytes(new SessInfoRsp(2, true));
        assertEquals(1, ext[5]);
        assertTrue(((SessInfoRsp) RnbdMsg.decode(ByteBuffer.wrap(ext))).ha());
        byte[] linux = bytes(new SessInfoRsp(2));
        assertEquals(0, linux[5]);
        assertFalse(((SessInfoRsp) RnbdMsg.decode(ByteBuffer.wrap(linux))).ha());
    }

    @Test
    void openTakesOverThroughResv1() throws Exception {
        byte[] linux = hex("0200000001002f6465762f72616d3000" + "00".repeat(264 - 16));
        byte[] ext = bytes(new Open(AccessMode.RW, "/dev/ram0", Open.F_TAKEOVER | Open.F_LEG));
        byte[] expected = linux.clone();
        expected[5] = 3;
        assertArrayEquals(expected, ext);
        Open back = (Open) RnbdMsg.decode(ByteBuffer.wrap(ext));
        assertTrue(back.takeover());
        assertTrue(back.leg());
        Open fromLinux = (Open) RnbdMsg.decode(ByteBuffer.wrap(linux));
        assertFalse(fromLinux.takeover());
        assertFalse(fromLinux.leg());
        byte[] unknownBits = linux.clone();
        unknownBits[5] = (byte) 0xf4;
        assertEquals(0, ((Open) RnbdMsg.decode(ByteBuffer.wrap(unknownBits))).flags(), "bits nobody defined are ignored");
    }

    @Test
    void openRspCarriesRoleAndGenerationInReservedBytes() throws Exception {
        OpenRsp plain = new OpenRsp(3, 131072, 255, 0, 0x3fffff, 4096, 0, 4096, 512, 128, false,
                OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK);
        byte[] linux = bytes(plain);
        OpenRsp ha = plain.withHa(OpenRsp.HA_EXPORT | OpenRsp.HA_ACTIVE, 0xfffffffeL);
        byte[] ext = bytes(ha);
        for (int i = 0; i < OpenRsp.SIZE; i++) {
            if (i != 46 && (i < 48 || i > 51)) {
                assertEquals(linux[i], ext[i], "byte " + i + " is Linux's");
            }
        }
        assertEquals(3, ext[46]);
        assertEquals(ha, RnbdMsg.decode(ByteBuffer.wrap(ext)));
        OpenRsp fromLinux = (OpenRsp) RnbdMsg.decode(ByteBuffer.wrap(linux));
        assertEquals(0, fromLinux.haFlags());
        assertEquals(0, fromLinux.generation());
        assertThrows(IllegalArgumentException.class, () -> plain.withHa(256, 0));
    }
}
