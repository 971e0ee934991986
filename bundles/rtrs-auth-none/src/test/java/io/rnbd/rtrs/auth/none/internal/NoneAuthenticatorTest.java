package io.rnbd.rtrs.auth.none.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

class NoneAuthenticatorTest {
    private final NoneAuthenticator auth = new NoneAuthenticator();

    @Test
    void methodIsNone() {
        assertEquals("none", auth.method());
    }

    @Test
    void oneMessageCarriesTheHostIdAndSucceeds() throws AuthException {
        AuthExchange host = auth.initiate("host-a");
        AuthExchange target = auth.respond();
        byte[] msg = host.step(new byte[0]);
        assertTrue(host.done());
        assertFalse(target.done());
        assertEquals("", target.peerId());
        assertNull(target.step(msg));
        assertTrue(target.done());
        assertEquals("host-a", target.peerId());
        assertEquals("", host.peerId());
    }

    @Test
    void goldenBytes() {
        assertArrayEquals(HexFormat.of().parseHex("4e010300" + "616263"), NoneAuthenticator.encode("abc"));
    }

    @Test
    void invalidHostIdIsRefusedLocally() {
        assertEquals(Errno.EINVAL, assertThrows(AuthException.class, () -> auth.initiate("")).errno());
        assertEquals(Errno.EINVAL, assertThrows(AuthException.class, () -> auth.initiate("a b")).errno());
        assertEquals(Errno.EINVAL, assertThrows(AuthException.class, () -> auth.initiate("x".repeat(256))).errno());
    }

    @Test
    void malformedMessagesFailTyped() {
        assertErrno(Errno.EBADMSG, null);
        assertErrno(Errno.EBADMSG, new byte[0]);
        assertErrno(Errno.EBADMSG, HexFormat.of().parseHex("4e01"));
        assertErrno(Errno.EPROTO, HexFormat.of().parseHex("00010100" + "61"));   // CHAP NEGOTIATE-like
        assertErrno(Errno.EPROTO, HexFormat.of().parseHex("4e020100" + "61"));   // version 2
        assertErrno(Errno.EBADMSG, HexFormat.of().parseHex("4e010500" + "61"));  // length lies
        assertErrno(Errno.EBADMSG, HexFormat.of().parseHex("4e010000"));         // empty id
        assertErrno(Errno.EBADMSG, HexFormat.of().parseHex("4e010200" + "c328")); // bad UTF-8
        assertErrno(Errno.EBADMSG, HexFormat.of().parseHex("4e010300" + "610a62")); // control char
    }

    @Test
    void randomGarbageNeverThrowsUnchecked() {
        Random rnd = new Random(42);
        for (int i = 0; i < 5000; i++) {
            byte[] junk = new byte[rnd.nextInt(40)];
            rnd.nextBytes(junk);
            if (junk.length > 0 && rnd.nextBoolean()) {
                junk[0] = 0x4E;
            }
            try {
                auth.respond().step(junk);
            } catch (AuthException expected) {
                assertTrue(expected.errno() == Errno.EBADMSG || expected.errno() == Errno.EPROTO);
            }
        }
    }

    @Test
    void noSecondMessage() throws AuthException {
        AuthExchange host = auth.initiate("h");
        byte[] msg = host.step(new byte[0]);
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> host.step(new byte[0])).errno());
        AuthExchange target = auth.respond();
        target.step(msg);
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> target.step(msg)).errno());
    }

    private void assertErrno(int errno, byte[] msg) {
        AuthExchange target = auth.respond();
        AuthException e = assertThrows(AuthException.class, () -> target.step(msg));
        assertEquals(errno, e.errno(), e.getMessage());
        assertFalse(target.done());
    }
}
