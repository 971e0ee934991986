package io.rnbd.rtrs.auth.chap.internal;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import io.rnbd.rtrs.auth.chap.internal.msg.ChapMessage;

import java.security.SecureRandom;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * CHAP messages from the network and the exchanges they drive. The decoder refuses only with
 * an {@link AuthException}, and what it accepts re-encodes to the same bytes. A target fed a
 * host's messages, each the genuine one or the fuzzer's replacement, by a host that holds the
 * WRONG key, must never finish (that would be an authentication bypass); a host fed the
 * fuzzer's messages as a target's fails only with an AuthException.
 */
class ChapFuzzTest {
    private static final String KEY = ChapSecrets.generate(1, 32);
    private static final String WRONG = ChapSecrets.generate(1, 32);
    private static final String CTRL = ChapSecrets.generate(1, 32);
    private static final SecureRandom RANDOM = new SecureRandom();

    private static ChapAuthenticator auth(String hostKey, String ctrlKey, DhGroup... groups) {
        try {
            ChapKeyStore store = new ChapKeyStore();
            store.setConfigKeys(Map.of("host-a", new HostKeys(DhchapKey.parse(hostKey),
                    ctrlKey == null ? null : DhchapKey.parse(ctrlKey))));
            return new ChapAuthenticator(store, RANDOM, new ChapSettings("target0",
                    List.of(ChapHash.SHA256, ChapHash.SHA512), List.of(groups)));
        } catch (ChapKeyException e) {
            throw new AssertionError(e);
        }
    }

    private static final ChapAuthenticator TARGET = auth(KEY, CTRL, DhGroup.NULL, DhGroup.FFDHE2048);
    private static final ChapAuthenticator IMPOSTOR = auth(WRONG, null, DhGroup.NULL);
    private static final ChapAuthenticator IMPOSTOR_DH = auth(WRONG, null, DhGroup.FFDHE2048);
    private static final ChapAuthenticator MUTUAL_HOST = auth(KEY, CTRL, DhGroup.NULL);

    @FuzzTest
    void messages(byte[] data) {
        try {
            ChapMessage m = ChapMessage.decode(data);
            byte[] again = m.toBytes();
            assertArrayEquals(again, ChapMessage.decode(again).toBytes());
        } catch (AuthException refused) {
            // the only allowed failure
        }
    }

    @FuzzTest
    void targetNeverAcceptsAWrongKey(FuzzedDataProvider in) throws AuthException {
        AuthExchange host = (in.consumeBoolean() ? IMPOSTOR_DH : IMPOSTOR).initiate("host-a");
        AuthExchange target = TARGET.respond();
        byte[] fromHost = host.step(new byte[0]);
        for (int round = 0; round < 3 && fromHost != null; round++) {
            byte[] sent = in.consumeBoolean() ? fromHost : in.consumeBytes(in.consumeInt(0, 600));
            byte[] fromTarget;
            try {
                fromTarget = target.step(sent);
            } catch (AuthException refused) {
                break;
            }
            assertFalse(target.done() || target.peerIdProven(), "the target accepted a host without its key");
            if (fromTarget == null) {
                break;
            }
            try {
                fromHost = host.step(fromTarget);
            } catch (AuthException hostGaveUp) {
                fromHost = in.consumeBytes(in.consumeInt(0, 600));
            }
        }
        assertFalse(target.done(), "the target accepted a host without its key");
    }

    @FuzzTest
    void hostRefusesWhatIsNotATarget(FuzzedDataProvider in) throws AuthException {
        AuthExchange host = MUTUAL_HOST.initiate("host-a");
        host.step(new byte[0]);
        for (int round = 0; round < 3; round++) {
            try {
                if (host.step(in.consumeBytes(in.consumeInt(0, 600))) == null) {
                    break;
                }
            } catch (AuthException refused) {
                break;
            }
        }
        assertFalse(host.done(), "the host accepted a target that never proved the controller key");
    }
}
