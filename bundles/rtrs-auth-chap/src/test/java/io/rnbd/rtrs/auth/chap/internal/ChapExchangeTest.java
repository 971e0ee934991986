package io.rnbd.rtrs.auth.chap.internal;

import static io.rnbd.rtrs.auth.chap.internal.Chaps.auth;
import static io.rnbd.rtrs.auth.chap.internal.Chaps.run;
import static io.rnbd.rtrs.auth.chap.internal.Chaps.secret;
import static io.rnbd.rtrs.auth.chap.internal.Chaps.settings;
import static io.rnbd.rtrs.auth.chap.internal.Chaps.store;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.auth.chap.internal.msg.ChapMessage;
import io.rnbd.rtrs.auth.chap.internal.msg.Failure1;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ChapExchangeTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:host-a";
    private static final String TARGET = "target-1";

    private final String hostSecret = secret(1, 32);
    private final String ctrlSecret = secret(3, 64);

    @ParameterizedTest
    @EnumSource(ChapHash.class)
    void nullGroupExchangeForEachHash(ChapHash hash) throws AuthException {
        fullExchange(hash, DhGroup.NULL, false);
    }

    @ParameterizedTest
    @EnumSource(ChapHash.class)
    void ffdhe2048ExchangeForEachHash(ChapHash hash) throws AuthException {
        fullExchange(hash, DhGroup.FFDHE2048, false);
    }

    @Test
    void ffdhe4096Bidirectional() throws AuthException {
        fullExchange(ChapHash.SHA512, DhGroup.FFDHE4096, true);
    }

    @ParameterizedTest
    @EnumSource(value = DhGroup.class, names = {"NULL", "FFDHE2048", "FFDHE3072"})
    void bidirectional(DhGroup group) throws AuthException {
        fullExchange(ChapHash.SHA384, group, true);
    }

    private void fullExchange(ChapHash hash, DhGroup group, boolean bidirectional) throws AuthException {
        String ctrl = bidirectional ? ctrlSecret : null;
        ChapAuthenticator host = auth(store(HOST, hostSecret, ctrl), settings("unused", hash, group));
        ChapAuthenticator target = auth(store(HOST, hostSecret, ctrl), settings(TARGET, hash, group));
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        List<byte[]> wire = run(h, t);
        assertEquals(bidirectional ? 5 : 4, wire.size());
        assertTrue(h.done());
        assertTrue(t.done());
        assertEquals(HOST, t.peerId());
        assertEquals(TARGET, h.peerId());
        assertEquals("chap", host.method());
    }

    @Test
    void targetPicksItsPreferredCommonChoice() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null),
                new ChapSettings("h", List.of(ChapHash.SHA256, ChapHash.SHA384), List.of(DhGroup.NULL, DhGroup.FFDHE2048)));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null),
                new ChapSettings(TARGET, List.of(ChapHash.SHA512, ChapHash.SHA384), List.of(DhGroup.FFDHE2048, DhGroup.NULL)));
        List<byte[]> wire = run(host.initiate(HOST), target.respond());
        var ch = (io.rnbd.rtrs.auth.chap.internal.msg.Challenge) ChapMessage.decode(wire.get(1));
        assertEquals(ChapHash.SHA384, ch.hash());
        assertEquals(DhGroup.FFDHE2048, ch.dhGroup());
    }

    @Test
    void noCommonHashFailsWithEopnotsupp() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA512, DhGroup.NULL));
        assertEquals(Errno.EOPNOTSUPP, runFails(host.initiate(HOST), target.respond()).errno());
    }

    @Test
    void wrongHostKeyIsRejectedAndTheHostLearnsIt() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, secret(1, 32), null), settings("h", ChapHash.SHA256, DhGroup.FFDHE2048));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.FFDHE2048));
        AuthExchange t = target.respond();
        AuthException e = runFails(host.initiate(HOST), t);
        assertEquals(Errno.EKEYREJECTED, e.errno());
        assertFalse(t.done());
        assertEquals("", t.peerId());
        assertEquals(Errno.EKEYREJECTED, assertThrows(AuthException.class, () -> t.step(new byte[4])).errno());
    }

    @Test
    void wrongCtrlKeyIsRejectedByTheHost() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, secret(0, 32)), settings("h", ChapHash.SHA512, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, ctrlSecret), settings(TARGET, ChapHash.SHA512, DhGroup.NULL));
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        AuthException e = runFails(h, t);
        assertEquals(Errno.EKEYREJECTED, e.errno());
        assertFalse(h.done());
        assertFalse(t.done(), "target must wait for SUCCESS2 before it counts as done");
    }

    @Test
    void hostWithoutKeyFailsInInitiate() {
        ChapAuthenticator host = auth(store("someone-else", hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        AuthException e = assertThrows(AuthException.class, () -> host.initiate(HOST));
        assertEquals(Errno.ENOKEY, e.errno());
        assertEquals(Errno.EINVAL, assertThrows(AuthException.class, () -> host.initiate("bad id")).errno());
    }

    @Test
    void targetWithoutKeyForTheHostSendsEnokey() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store("other-host", hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        byte[] failure = t.step(h.step(new byte[0]));
        assertEquals(new Failure1(((Failure1) ChapMessage.decode(failure)).tid(), Errno.ENOKEY), ChapMessage.decode(failure));
        AuthException e = assertThrows(AuthException.class, () -> h.step(failure));
        assertEquals(Errno.ENOKEY, e.errno());
        assertTrue(e.getMessage().contains(HOST), e.getMessage());
    }

    @Test
    void bidirectionalRequestWithoutTargetCtrlKeyIsEnokey() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, ctrlSecret), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
        assertEquals(Errno.ENOKEY, runFails(host.initiate(HOST), target.respond()).errno());
    }

    @Test
    void replayedReplyFailsAgainstAFreshChallenge() throws AuthException {
        for (DhGroup group : new DhGroup[] {DhGroup.NULL, DhGroup.FFDHE2048}) {
            ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, group));
            ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, group));
            List<byte[]> recorded = run(host.initiate(HOST), target.respond());
            // an eavesdropper replays NEGOTIATE and REPLY to a new target exchange
            AuthExchange t = target.respond();
            t.step(recorded.get(0));
            byte[] answer = t.step(recorded.get(2));
            assertEquals(Errno.EKEYREJECTED, ((Failure1) ChapMessage.decode(answer)).errno(), group.configName());
            assertFalse(t.done());
        }
    }

    @Test
    void transactionIdMismatchIsEproto() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        byte[] challenge = t.step(h.step(new byte[0]));
        challenge[2] ^= 1;
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> h.step(challenge)).errno());
    }

    @Test
    void garbageAtEveryStepIsATypedFailure() throws AuthException {
        byte[][] junk = {null, new byte[0], {1}, {0x02, 0x01, 0, 0}, {(byte) 0x99, 1, 0, 0}, new byte[300]};
        for (byte[] bad : junk) {
            // target side: answers FAILURE1 with EBADMSG/EPROTO
            AuthExchange t = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL)).respond();
            Failure1 f = (Failure1) ChapMessage.decode(t.step(bad));
            assertTrue(f.errno() == Errno.EBADMSG || f.errno() == Errno.EPROTO, "errno " + f.errno());
            // host side, after NEGOTIATE and after REPLY: throws EBADMSG/EPROTO
            for (int steps = 0; steps < 2; steps++) {
                ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
                ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
                AuthExchange h = host.initiate(HOST);
                AuthExchange t2 = target.respond();
                byte[] m = t2.step(h.step(new byte[0]));
                if (steps == 1) {
                    t2.step(h.step(m));
                }
                AuthException e = assertThrows(AuthException.class, () -> h.step(bad));
                assertTrue(e.errno() == Errno.EBADMSG || e.errno() == Errno.EPROTO, e.getMessage());
                assertFalse(h.done());
            }
        }
    }

    @Test
    void hostRejectsAMessageBeforeNegotiate() throws AuthException {
        AuthExchange h = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL)).initiate(HOST);
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> h.step(new byte[] {1, 2})).errno());
    }

    @Test
    void finishedExchangesRefuseMoreMessages() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        List<byte[]> wire = run(h, t);
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> h.step(wire.get(3))).errno());
        assertEquals(Errno.EPROTO, assertThrows(AuthException.class, () -> t.step(wire.get(2))).errno());
    }

    @Test
    void rotationAffectsOnlyExchangesThatStartAfterwards() throws AuthException {
        String newSecret = secret(2, 48);
        ChapKeyStore hostStore = store(HOST, hostSecret, null);
        ChapKeyStore targetStore = store(HOST, hostSecret, null);
        ChapAuthenticator host = auth(hostStore, settings("h", ChapHash.SHA256, DhGroup.FFDHE2048));
        ChapAuthenticator target = auth(targetStore, settings(TARGET, ChapHash.SHA256, DhGroup.FFDHE2048));

        AuthExchange established = host.initiate(HOST);
        AuthExchange establishedT = target.respond();
        run(established, establishedT);

        // an exchange in flight when the target rotates keeps the key it started with
        AuthExchange h = host.initiate(HOST);
        AuthExchange t = target.respond();
        byte[] challenge = t.step(h.step(new byte[0]));
        targetStore.setConfigKeys(Map.of(HOST, new HostKeys(Chaps.key(newSecret), null)));
        byte[] success = t.step(h.step(challenge));
        assertNull(h.step(success));
        assertTrue(t.done());

        // a new exchange with the old host key is rejected; after the host rotates too, it works
        assertEquals(Errno.EKEYREJECTED, runFails(host.initiate(HOST), target.respond()).errno());
        hostStore.setConfigKeys(Map.of(HOST, new HostKeys(Chaps.key(newSecret), null)));
        run(host.initiate(HOST), target.respond());

        assertTrue(established.done() && establishedT.done());
        assertEquals(HOST, establishedT.peerId());
    }

    @Test
    void settingsUpdateAppliesToNewExchanges() throws AuthException {
        ChapAuthenticator host = auth(store(HOST, hostSecret, null), settings("h", ChapHash.SHA256, DhGroup.NULL));
        ChapAuthenticator target = auth(store(HOST, hostSecret, null), settings(TARGET, ChapHash.SHA256, DhGroup.NULL));
        target.update(settings("renamed-target", ChapHash.SHA256, DhGroup.NULL));
        AuthExchange h = host.initiate(HOST);
        run(h, target.respond());
        assertEquals("renamed-target", h.peerId());
    }

    private static AuthException runFails(AuthExchange host, AuthExchange target) {
        return assertThrows(AuthException.class, () -> run(host, target));
    }
}
