package io.rnbd.rtrs.auth.chap.internal.msg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.auth.chap.internal.ChapHash;
import io.rnbd.rtrs.auth.chap.internal.DhGroup;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ChapMessageTest {
    private static final HexFormat HEX = HexFormat.of();

    private static byte[] fill(int n, int b) {
        byte[] a = new byte[n];
        Arrays.fill(a, (byte) b);
        return a;
    }

    private static String rep(String hexByte, int n) {
        return hexByte.repeat(n);
    }

    private static final byte[] NEGOTIATE = HEX.parseHex("00013412" + "03020200" + "030201" + "0100" + "6162");
    private static final byte[] CHALLENGE = HEX.parseHex("01010201" + "01002000" + "d4c3b2a1" + "0000" + "0100"
            + rep("11", 32) + "74");
    private static final byte[] REPLY = HEX.parseHex("02010201" + "20010200" + "05000000" + rep("22", 32) + rep("33", 32)
            + "aabb");
    private static final byte[] SUCCESS1 = HEX.parseHex("03010201" + "01200000" + rep("44", 32));
    private static final byte[] SUCCESS1_EMPTY = HEX.parseHex("03010201" + "00000000");
    private static final byte[] SUCCESS2 = HEX.parseHex("04010201");
    private static final byte[] FAILURE1 = HEX.parseHex("f1010700" + "7e000000");

    @Test
    void negotiateGoldenBytes() throws AuthException {
        Negotiate n = new Negotiate(0x1234, List.of(3, 2, 1), List.of(1, 0), "ab");
        assertArrayEquals(NEGOTIATE, n.toBytes());
        assertEquals(n, ChapMessage.decode(NEGOTIATE));
    }

    @Test
    void challengeGoldenBytes() throws AuthException {
        Challenge c = new Challenge(0x0102, ChapHash.SHA256, DhGroup.NULL, 0xA1B2C3D4L, fill(32, 0x11), new byte[0], "t");
        assertArrayEquals(CHALLENGE, c.toBytes());
        Challenge d = (Challenge) ChapMessage.decode(CHALLENGE);
        assertEquals(0xA1B2C3D4L, d.s1());
        assertEquals("t", d.targetId());
        assertArrayEquals(c.toBytes(), d.toBytes());
    }

    @Test
    void replyGoldenBytes() throws AuthException {
        Reply r = new Reply(0x0102, fill(32, 0x22), fill(32, 0x33), 5, HEX.parseHex("aabb"));
        assertArrayEquals(REPLY, r.toBytes());
        Reply d = (Reply) ChapMessage.decode(REPLY);
        assertTrue(d.bidirectional());
        assertArrayEquals(REPLY, d.toBytes());
    }

    @Test
    void successAndFailureGoldenBytes() throws AuthException {
        assertArrayEquals(SUCCESS1, new Success1(0x0102, fill(32, 0x44)).toBytes());
        assertArrayEquals(SUCCESS1, ChapMessage.decode(SUCCESS1).toBytes());
        assertArrayEquals(SUCCESS1_EMPTY, new Success1(0x0102, null).toBytes());
        assertNull(((Success1) ChapMessage.decode(SUCCESS1_EMPTY)).r2());
        assertArrayEquals(SUCCESS2, new Success2(0x0102).toBytes());
        assertEquals(new Success2(0x0102), ChapMessage.decode(SUCCESS2));
        assertArrayEquals(FAILURE1, new Failure1(7, Errno.ENOKEY).toBytes());
        assertEquals(new Failure1(7, Errno.ENOKEY), ChapMessage.decode(FAILURE1));
    }

    @Test
    void everyTruncationIsEbadmsg() {
        for (byte[] msg : List.of(NEGOTIATE, CHALLENGE, REPLY, SUCCESS1, SUCCESS1_EMPTY, FAILURE1)) {
            for (int len = 0; len < msg.length; len++) {
                byte[] cut = Arrays.copyOf(msg, len);
                AuthException e = assertThrows(AuthException.class, () -> ChapMessage.decode(cut));
                assertEquals(Errno.EBADMSG, e.errno(), "type " + msg[0] + " cut at " + len + ": " + e.getMessage());
            }
        }
    }

    @Test
    void trailingBytesAreEbadmsg() {
        for (byte[] msg : List.of(NEGOTIATE, CHALLENGE, REPLY, SUCCESS1, SUCCESS2, FAILURE1)) {
            byte[] longer = Arrays.copyOf(msg, msg.length + 1);
            assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> ChapMessage.decode(longer)).errno());
        }
    }

    @Test
    void unknownTypeOrVersionIsEproto() {
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class,
                () -> ChapMessage.decode(HEX.parseHex("05010000"))).errno());
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class,
                () -> ChapMessage.decode(HEX.parseHex("04020000"))).errno());
    }

    @Test
    void inconsistentFieldsAreRejected() {
        // challenge: hash id 9; hl not matching the hash; DH length not matching the group; reserved byte set
        assertRejected(CHALLENGE, 4, 9);
        assertRejected(CHALLENGE, 6, 48);
        assertRejected(CHALLENGE, 12, 1);
        assertRejected(CHALLENGE, 7, 1);
        assertRejected(CHALLENGE, 14, 0); // empty target id
        // reply: cvalid 2; cvalid 0 with S2 set; odd hl
        assertRejected(REPLY, 5, 2);
        assertRejected(REPLY, 4, 31);
        byte[] noC2 = Arrays.copyOf(REPLY, REPLY.length);
        noC2[5] = 0;
        assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> ChapMessage.decode(noC2)).errno());
        // negotiate: zero hashes; too many groups; id length 0
        assertRejected(NEGOTIATE, 4, 0);
        assertRejected(NEGOTIATE, 5, 9);
        assertRejected(NEGOTIATE, 6, 0);
        // success1: rvalid without a length; failure without errno; reserved set
        assertRejected(SUCCESS1, 5, 0);
        assertRejected(FAILURE1, 4, 0);
        assertRejected(FAILURE1, 6, 1);
    }

    @Test
    void invalidIdentityBytesAreRejected() {
        byte[] bad = Arrays.copyOf(NEGOTIATE, NEGOTIATE.length);
        bad[bad.length - 1] = (byte) 0xC3; // truncated UTF-8 sequence
        assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> ChapMessage.decode(bad)).errno());
        bad[bad.length - 1] = 0x20; // a space
        assertEquals(Errno.EBADMSG, assertThrows(AuthException.class, () -> ChapMessage.decode(bad)).errno());
    }

    @Test
    void randomMutationsNeverEscapeAsUncheckedExceptions() {
        Random rnd = new Random(7);
        List<byte[]> seeds = List.of(NEGOTIATE, CHALLENGE, REPLY, SUCCESS1, SUCCESS2, FAILURE1);
        for (int i = 0; i < 20000; i++) {
            byte[] seed = seeds.get(rnd.nextInt(seeds.size()));
            byte[] m = Arrays.copyOf(seed, Math.max(0, seed.length + rnd.nextInt(9) - 4));
            for (int flips = rnd.nextInt(4); flips >= 0 && m.length > 0; flips--) {
                m[rnd.nextInt(m.length)] = (byte) rnd.nextInt(256);
            }
            try {
                ChapMessage.decode(m);
            } catch (AuthException expected) {
                assertTrue(expected.errno() == Errno.EBADMSG || expected.errno() == Errno.EPROTO);
            }
        }
    }

    private static void assertRejected(byte[] good, int offset, int value) {
        byte[] bad = Arrays.copyOf(good, good.length);
        bad[offset] = (byte) value;
        AuthException e = assertThrows(AuthException.class, () -> ChapMessage.decode(bad), "offset " + offset);
        assertTrue(e.errno() == Errno.EBADMSG || e.errno() == Errno.EPROTO, e.getMessage());
    }
}
