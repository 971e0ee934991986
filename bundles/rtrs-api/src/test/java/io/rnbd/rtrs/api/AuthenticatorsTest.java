package io.rnbd.rtrs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.common.Errno;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuthenticatorsTest {
    private record Named(String method) implements Authenticator {
        @Override
        public AuthExchange initiate(String hostId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public AuthExchange respond() {
            throw new UnsupportedOperationException();
        }
    }

    private final Authenticator none = new Named("none");
    private final Authenticator chap = new Named("chap");

    @Test
    void emptyMethodTakesTheBestRankedOrNone() {
        assertSame(chap, Authenticators.select(List.of(chap, none), ""));
        assertSame(none, Authenticators.select(List.of(none, chap), null));
        assertNull(Authenticators.select(List.of(), " "));
    }

    @Test
    void configuredMethodWinsWhateverTheRanking() {
        assertSame(none, Authenticators.select(List.of(chap, none), "none"));
        assertSame(chap, Authenticators.select(List.of(none, chap), " chap "));
    }

    @Test
    void absentConfiguredMethodRefusesRetryablyInsteadOfTurningAuthenticationOff() throws Exception {
        Authenticator a = Authenticators.select(List.of(none), "chap");
        assertEquals("chap", a.method());
        AuthException host = assertThrows(AuthException.class, () -> a.initiate("h1"));
        assertEquals(Errno.EAGAIN, host.errno());
        AuthException target = assertThrows(AuthException.class, () -> a.respond().step(new byte[0]));
        assertEquals(Errno.EAGAIN, target.errno());
    }
}
