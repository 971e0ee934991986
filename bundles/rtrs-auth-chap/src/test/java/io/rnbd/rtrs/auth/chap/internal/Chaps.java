package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Test helpers: key stores, authenticators and a transport-like driver. */
final class Chaps {
    static final SecureRandom RANDOM = new SecureRandom();

    private Chaps() {
    }

    static DhchapKey key(String secret) {
        try {
            return DhchapKey.parse(secret);
        } catch (ChapKeyException e) {
            throw new AssertionError(e);
        }
    }

    static String secret(int hh, int len) {
        return ChapSecrets.generate(hh, len);
    }

    static ChapKeyStore store(String hostId, String hostSecret, String ctrlSecret) {
        ChapKeyStore s = new ChapKeyStore();
        s.setConfigKeys(Map.of(hostId, new HostKeys(key(hostSecret), ctrlSecret == null ? null : key(ctrlSecret))));
        return s;
    }

    static ChapSettings settings(String targetId, ChapHash hash, DhGroup group) {
        return new ChapSettings(targetId, List.of(hash), List.of(group));
    }

    static ChapAuthenticator auth(ChapKeyStore store, ChapSettings settings) {
        return new ChapAuthenticator(store, RANDOM, settings);
    }

    /**
     * Runs an exchange the way the transport does: the host speaks first, each side feeds the
     * other's message to step and sends what it returns, until a side returns null.
     *
     * @return every message on the wire, in order
     */
    static List<byte[]> run(AuthExchange host, AuthExchange target) throws AuthException {
        List<byte[]> wire = new ArrayList<>();
        byte[] msg = host.step(new byte[0]);
        AuthExchange next = target;
        while (msg != null) {
            wire.add(msg);
            msg = next.step(msg);
            next = next == target ? host : target;
        }
        return wire;
    }
}
