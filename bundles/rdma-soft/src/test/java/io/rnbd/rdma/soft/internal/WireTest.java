package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;

/** The frame header, byte for byte. */
class WireTest {
    private static ByteBuffer header() {
        return ByteBuffer.allocate(Wire.HDR).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void writeWithImmediateAskingForAnAckAndCarryingThree() {
        ByteBuffer b = header();
        Wire.put(b, Wire.WRITE_IMM, Wire.ST_OK, Wire.ACK_REQ, 0x1000, 0x1122334455667788L, 0xCAFE0001, 0xA1B2C3D4,
                0, 3);
        assertEquals(Wire.HDR, b.position());
        assertArrayEquals(HexFormat.of().parseHex(
                "07" + "00" + "01" + "00"              // type WRITE_IMM, status, flags ACK_REQ, reserved
                + "00100000"                           // payload length 4096
                + "8877665544332211"                   // remote address
                + "0100feca"                           // rkey
                + "d4c3b2a1"                           // immediate
                + "00000000"                           // aux
                + "03000000"),                         // acked: three of the peer's requests
                b.array());
    }

    @Test
    void nakCarriesItsStatusAndTheAcknowledgementsBeforeIt() {
        ByteBuffer b = header();
        Wire.put(b, Wire.ACK, Wire.ST_REM_ACCESS, (byte) 0, 0, 0, 0, 0, 0, 2);
        assertArrayEquals(HexFormat.of().parseHex("0a010000" + "00000000" + "0000000000000000" + "00000000"
                + "00000000" + "00000000" + "02000000"), b.array());
        assertEquals(Wire.ACK, Wire.type(b, 0));
        assertEquals(Wire.ST_REM_ACCESS, Wire.status(b, 0));
        assertEquals(2, Wire.acked(b, 0));
        Wire.clearAcked(b, 0);
        assertEquals(0, Wire.acked(b, 0));
    }

    @Test
    void helloCarriesMagicVersionThreeAndTheConnectPrivateDataLength() {
        ByteBuffer b = header();
        Wire.put(b, Wire.HELLO, Wire.ST_OK, 56, Wire.MAGIC, 0, 0, 0);
        assertArrayEquals(HexFormat.of().parseHex("01000000" // type HELLO, status, flags, reserved
                + "38000000"                                   // payload: 56 bytes of private data
                + "0300000054464f53"                           // "SOFT", version 3 (u64 LE)
                + "00000000" + "00000000" + "00000000" + "00000000"), b.array());
        assertEquals(Wire.MAGIC, Wire.addr(b, 0));
    }

    @Test
    void acceptCarriesUpTo196BytesOfPrivateData() {
        ByteBuffer b = header();
        Wire.put(b, Wire.ACCEPT, Wire.ST_OK, 196, 0, 0, 0, 0);
        assertArrayEquals(HexFormat.of().parseHex("02000000" + "c4000000" + "0000000000000000" + "00000000"
                + "00000000" + "00000000" + "00000000"), b.array());
    }

    @Test
    void rejectCarriesTheReasonInAuxAndItsPrivateDataLength() {
        ByteBuffer b = header();
        Wire.put(b, Wire.REJECT, Wire.ST_OK, 148, 0, 0, 0, 129);
        assertArrayEquals(HexFormat.of().parseHex("03000000" + "94000000" + "0000000000000000" + "00000000"
                + "00000000"
                + "81000000"                                   // aux: reason 129 (EKEYREJECTED)
                + "00000000"), b.array());
    }

    @Test
    void sendWithInvalidateCarriesTheRkeyToInvalidateAtOffset16() {
        ByteBuffer b = header();
        Wire.put(b, Wire.SEND_INV, Wire.ST_OK, Wire.ACK_REQ, 0, 0, 0x11223344, 0, 0, 0);
        assertArrayEquals(HexFormat.of().parseHex("0c000100" // type 12 SEND_INV, status, ACK_REQ, reserved
                + "00000000"                                   // empty payload
                + "0000000000000000"
                + "44332211"                                   // the receiver's rkey to invalidate
                + "00000000" + "00000000" + "00000000"), b.array());
    }

    @Test
    void privateDataLimitsAreTheIbCms() {
        assertEquals(56, Wire.maxPrivateData(Wire.HELLO));
        assertEquals(196, Wire.maxPrivateData(Wire.ACCEPT));
        assertEquals(148, Wire.maxPrivateData(Wire.REJECT));
        assertEquals(-1, Wire.maxPrivateData(Wire.SEND));
        assertTrue(Wire.hasPayload(Wire.ACCEPT) && Wire.hasPayload(Wire.REJECT) && Wire.hasPayload(Wire.SEND_INV));
        assertFalse(Wire.hasPayload(Wire.ACK) || Wire.hasPayload(Wire.READ_REQ) || Wire.hasPayload(Wire.DISCONNECT));
    }
}
