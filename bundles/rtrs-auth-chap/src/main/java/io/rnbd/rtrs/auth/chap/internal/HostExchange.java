package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.auth.chap.internal.msg.Challenge;
import io.rnbd.rtrs.auth.chap.internal.msg.ChapMessage;
import io.rnbd.rtrs.auth.chap.internal.msg.Failure1;
import io.rnbd.rtrs.auth.chap.internal.msg.Negotiate;
import io.rnbd.rtrs.auth.chap.internal.msg.Reply;
import io.rnbd.rtrs.auth.chap.internal.msg.Success1;
import io.rnbd.rtrs.auth.chap.internal.msg.Success2;
import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The host (initiator) side of one exchange: NEGOTIATE → (CHALLENGE) → REPLY →
 * (SUCCESS1) → SUCCESS2 if bidirectional. Every failure is thrown; a FAILURE1 from the
 * target is thrown with the target's errno, so ENOKEY/EKEYREJECTED reach the reconnect logic.
 */
final class HostExchange implements AuthExchange {
    enum State { START, WAIT_CHALLENGE, WAIT_SUCCESS1, DONE, FAILED }

    private static final Map<State, Set<State>> MOVES = new EnumMap<>(Map.of(
            State.START, EnumSet.of(State.WAIT_CHALLENGE, State.FAILED),
            State.WAIT_CHALLENGE, EnumSet.of(State.WAIT_SUCCESS1, State.FAILED),
            State.WAIT_SUCCESS1, EnumSet.of(State.DONE, State.FAILED),
            State.DONE, EnumSet.noneOf(State.class),
            State.FAILED, EnumSet.noneOf(State.class)));

    private final String hostId;
    private final HostKeys keys;
    private final ChapSettings settings;
    private final SecureRandom random;

    private State state = State.START;
    private int failErrno;
    private int tid;
    private ChapHash hash;
    private String targetId = "";
    private byte[] c2;
    private long s2;
    private byte[] sharedSecret;

    HostExchange(String hostId, HostKeys keys, ChapSettings settings, SecureRandom random) {
        this.hostId = hostId;
        this.keys = keys;
        this.settings = settings;
        this.random = random;
    }

    @Override
    public synchronized byte[] step(byte[] peerMessage) throws AuthException {
        try {
            return switch (state) {
                case START -> negotiate(peerMessage);
                case WAIT_CHALLENGE -> reply(ChapMessage.decode(peerMessage));
                case WAIT_SUCCESS1 -> finish(ChapMessage.decode(peerMessage));
                case DONE -> throw new AuthException(Errno.EPROTO, "CHAP exchange already finished");
                case FAILED -> throw new AuthException(failErrno, "CHAP exchange already failed");
            };
        } catch (AuthException e) {
            // a stray message after success is refused without undoing the success
            if (state != State.FAILED && state != State.DONE) {
                failErrno = e.errno();
                moveTo(State.FAILED);
            }
            wipe();
            throw e;
        }
    }

    private byte[] negotiate(byte[] peerMessage) throws AuthException {
        if (peerMessage != null && peerMessage.length != 0) {
            throw new AuthException(Errno.EPROTO, "the host speaks first; got a message before NEGOTIATE");
        }
        tid = random.nextInt(0x10000);
        moveTo(State.WAIT_CHALLENGE);
        return new Negotiate(tid, settings.hashes().stream().map(ChapHash::id).toList(),
                settings.dhGroups().stream().map(DhGroup::id).toList(), hostId).toBytes();
    }

    private byte[] reply(ChapMessage m) throws AuthException {
        Challenge ch = expect(m, Challenge.class);
        if (!settings.hashes().contains(ch.hash()) || !settings.dhGroups().contains(ch.dhGroup())) {
            throw new AuthException(Errno.EPROTO, "target chose " + ch.hash().configName() + "/"
                    + ch.dhGroup().configName() + ", which this host did not offer");
        }
        hash = ch.hash();
        targetId = ch.targetId();
        byte[] ourValue = new byte[0];
        if (ch.dhGroup() != DhGroup.NULL) {
            BigInteger x = ch.dhGroup().newPrivate(random);
            ourValue = ch.dhGroup().publicValue(x);
            sharedSecret = ch.dhGroup().sharedSecret(x, ch.dhValue());
        }
        byte[] kh = keys.hostKey().transformed(hostId);
        byte[] r1 = ChapCrypto.hostResponse(hash, kh, ChapCrypto.augment(hash, sharedSecret, ch.c1()),
                ch.s1(), tid, hostId, targetId);
        Arrays.fill(kh, (byte) 0);
        if (keys.hasCtrlKey()) {
            c2 = new byte[hash.length()];
            random.nextBytes(c2);
            do {
                s2 = random.nextInt() & 0xFFFFFFFFL;
            } while (s2 == 0);
        }
        moveTo(State.WAIT_SUCCESS1);
        return new Reply(tid, r1, c2, s2, ourValue).toBytes();
    }

    private byte[] finish(ChapMessage m) throws AuthException {
        Success1 ok = expect(m, Success1.class);
        if (c2 == null) {
            if (ok.r2() != null) {
                throw new AuthException(Errno.EPROTO, "target sent R2 although no bidirectional auth was requested");
            }
            moveTo(State.DONE);
            wipe();
            return null;
        }
        if (ok.r2() == null) {
            throw new AuthException(Errno.EKEYREJECTED, "target '" + targetId + "' did not answer our challenge");
        }
        byte[] kc = keys.ctrlKey().transformed(targetId);
        byte[] expected = ChapCrypto.ctrlResponse(hash, kc, ChapCrypto.augment(hash, sharedSecret, c2),
                s2, tid, targetId, hostId);
        Arrays.fill(kc, (byte) 0);
        if (!MessageDigest.isEqual(expected, ok.r2())) {
            throw new AuthException(Errno.EKEYREJECTED, "target '" + targetId
                    + "' failed to prove the controller key (wrong ctrl key on either side?)");
        }
        moveTo(State.DONE);
        wipe();
        return new Success2(tid).toBytes();
    }

    private <T extends ChapMessage> T expect(ChapMessage m, Class<T> type) throws AuthException {
        if (m instanceof Failure1 f) {
            String why = switch (f.errno()) {
                case Errno.ENOKEY -> "target has no key for host '" + hostId + "' (or none for bidirectional auth)";
                case Errno.EKEYREJECTED -> "target rejected our response for host '" + hostId + "' (wrong key?)";
                default -> "target refused authentication";
            };
            throw new AuthException(f.errno(), why);
        }
        if (!type.isInstance(m)) {
            throw new AuthException(Errno.EPROTO, "expected " + type.getSimpleName() + ", got message type " + m.type());
        }
        if (m.tid() != tid) {
            throw new AuthException(Errno.EPROTO, "transaction id " + m.tid() + " does not match " + tid);
        }
        return type.cast(m);
    }

    private void moveTo(State next) {
        if (!MOVES.get(state).contains(next)) {
            throw new IllegalStateException("CHAP host exchange cannot move " + state + " -> " + next);
        }
        state = next;
    }

    private void wipe() {
        if (sharedSecret != null) {
            Arrays.fill(sharedSecret, (byte) 0);
            sharedSecret = null;
        }
    }

    @Override
    public synchronized boolean done() {
        return state == State.DONE;
    }

    @Override
    public synchronized String peerId() {
        return state == State.DONE ? targetId : "";
    }

    @Override
    public synchronized String toString() {
        return "ChapHostExchange[host=" + hostId + ", state=" + state + "]";
    }
}
