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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The target (responder) side of one exchange. A failure is answered with FAILURE1 carrying
 * the errno, so the host learns ENOKEY or EKEYREJECTED and stops reconnecting; this side is
 * then finished with {@link #done()} false, and any further {@code step} throws that errno.
 */
final class TargetExchange implements AuthExchange {
    private static final Logger LOG = LoggerFactory.getLogger(TargetExchange.class);

    enum State { WAIT_NEGOTIATE, WAIT_REPLY, WAIT_SUCCESS2, DONE, FAILED }

    private static final Map<State, Set<State>> MOVES = new EnumMap<>(Map.of(
            State.WAIT_NEGOTIATE, EnumSet.of(State.WAIT_REPLY, State.FAILED),
            State.WAIT_REPLY, EnumSet.of(State.WAIT_SUCCESS2, State.DONE, State.FAILED),
            State.WAIT_SUCCESS2, EnumSet.of(State.DONE, State.FAILED),
            State.DONE, EnumSet.noneOf(State.class),
            State.FAILED, EnumSet.noneOf(State.class)));

    private final ChapKeyStore keyStore;
    private final ChapSettings settings;
    private final SecureRandom random;

    private State state = State.WAIT_NEGOTIATE;
    private int failErrno;
    private int tid;
    private String hostId;
    private HostKeys keys;
    private ChapHash hash;
    private DhGroup group;
    private BigInteger dhPrivate;
    private byte[] c1;
    private long s1;

    TargetExchange(ChapKeyStore keyStore, ChapSettings settings, SecureRandom random) {
        this.keyStore = keyStore;
        this.settings = settings;
        this.random = random;
    }

    @Override
    public synchronized byte[] step(byte[] peerMessage) throws AuthException {
        switch (state) {
            case DONE:
                throw new AuthException(Errno.EPROTO, "CHAP exchange already finished");
            case FAILED:
                throw new AuthException(failErrno, "CHAP exchange already failed");
            default:
                break;
        }
        try {
            ChapMessage m = ChapMessage.decode(peerMessage);
            return switch (state) {
                case WAIT_NEGOTIATE -> challenge(expect(m, Negotiate.class, false));
                case WAIT_REPLY -> verify(expect(m, Reply.class, true));
                case WAIT_SUCCESS2 -> finish(expect(m, Success2.class, true));
                default -> throw new IllegalStateException(state.toString());
            };
        } catch (AuthException e) {
            LOG.warn("CHAP authentication of host '{}' failed: {}", hostId == null ? "?" : hostId, e.getMessage());
            failErrno = e.errno();
            moveTo(State.FAILED);
            dhPrivate = null;
            return new Failure1(tid, e.errno()).toBytes();
        }
    }

    private byte[] challenge(Negotiate n) throws AuthException {
        tid = n.tid();
        hostId = n.hostId();
        keys = keyStore.lookup(hostId);
        if (keys == null) {
            throw new AuthException(Errno.ENOKEY, "no CHAP key for host '" + hostId + "'");
        }
        hash = settings.hashes().stream().filter(h -> n.hashIds().contains(h.id())).findFirst()
                .orElseThrow(() -> new AuthException(Errno.EOPNOTSUPP, "no common hash with host '" + n.hostId() + "'"));
        group = settings.dhGroups().stream().filter(g -> n.dhGroupIds().contains(g.id())).findFirst()
                .orElseThrow(() -> new AuthException(Errno.EOPNOTSUPP, "no common DH group with host '" + n.hostId() + "'"));
        c1 = new byte[hash.length()];
        random.nextBytes(c1);
        do {
            s1 = random.nextInt() & 0xFFFFFFFFL;
        } while (s1 == 0);
        byte[] ourValue = new byte[0];
        if (group != DhGroup.NULL) {
            dhPrivate = group.newPrivate(random);
            ourValue = group.publicValue(dhPrivate);
        }
        moveTo(State.WAIT_REPLY);
        return new Challenge(tid, hash, group, s1, c1, ourValue, settings.targetId()).toBytes();
    }

    private byte[] verify(Reply r) throws AuthException {
        if (r.r1().length != hash.length()) {
            throw new AuthException(Errno.EBADMSG, "REPLY length " + r.r1().length + " for " + hash.configName());
        }
        byte[] sharedSecret = null;
        if (group != DhGroup.NULL) {
            sharedSecret = group.sharedSecret(dhPrivate, r.dhValue());
        } else if (r.dhValue().length != 0) {
            throw new AuthException(Errno.EBADMSG, "REPLY carries a DH value for the null group");
        }
        dhPrivate = null;
        try {
            byte[] kh = keys.hostKey().transformed(hostId);
            byte[] expected = ChapCrypto.hostResponse(hash, kh, ChapCrypto.augment(hash, sharedSecret, c1),
                    s1, tid, hostId, settings.targetId());
            Arrays.fill(kh, (byte) 0);
            if (!MessageDigest.isEqual(expected, r.r1())) {
                throw new AuthException(Errno.EKEYREJECTED, "host '" + hostId + "' gave a wrong response");
            }
            if (!r.bidirectional()) {
                moveTo(State.DONE);
                LOG.info("CHAP: host '{}' authenticated ({}, {})", hostId, hash.configName(), group.configName());
                return new Success1(tid, null).toBytes();
            }
            if (!keys.hasCtrlKey()) {
                throw new AuthException(Errno.ENOKEY, "host '" + hostId + "' asks for bidirectional auth but no ctrl key is configured");
            }
            byte[] kc = keys.ctrlKey().transformed(settings.targetId());
            byte[] r2 = ChapCrypto.ctrlResponse(hash, kc, ChapCrypto.augment(hash, sharedSecret, r.c2()),
                    r.s2(), tid, settings.targetId(), hostId);
            Arrays.fill(kc, (byte) 0);
            moveTo(State.WAIT_SUCCESS2);
            return new Success1(tid, r2).toBytes();
        } finally {
            if (sharedSecret != null) {
                Arrays.fill(sharedSecret, (byte) 0);
            }
        }
    }

    private byte[] finish(Success2 s) {
        moveTo(State.DONE);
        LOG.info("CHAP: host '{}' authenticated bidirectionally ({}, {})", hostId, hash.configName(), group.configName());
        return null;
    }

    private <T extends ChapMessage> T expect(ChapMessage m, Class<T> type, boolean checkTid) throws AuthException {
        if (!type.isInstance(m)) {
            throw new AuthException(Errno.EPROTO, "expected " + type.getSimpleName() + ", got message type " + m.type());
        }
        if (checkTid && m.tid() != tid) {
            throw new AuthException(Errno.EPROTO, "transaction id " + m.tid() + " does not match " + tid);
        }
        return type.cast(m);
    }

    private void moveTo(State next) {
        if (!MOVES.get(state).contains(next)) {
            throw new IllegalStateException("CHAP target exchange cannot move " + state + " -> " + next);
        }
        state = next;
    }

    @Override
    public synchronized boolean done() {
        return state == State.DONE;
    }

    @Override
    public synchronized String peerId() {
        return state == State.DONE ? hostId : "";
    }

    /** The host's response R1 binds its id to the key only that host (and we) hold: a proof, not a claim. */
    @Override
    public synchronized boolean peerIdProven() {
        return state == State.DONE;
    }

    @Override
    public synchronized String toString() {
        return "ChapTargetExchange[host=" + (hostId == null ? "?" : hostId) + ", state=" + state + "]";
    }
}
