package io.rnbd.rtrs.auth.chap.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * DH-HMAC-CHAP-like mutual challenge-response ({@code rtrs.auth=chap}). Each exchange takes
 * the keys and settings in force when it starts, so rotating keys or settings never disturbs
 * an exchange in progress, let alone an established session.
 */
public final class ChapAuthenticator implements Authenticator {
    public static final String METHOD = "chap";

    private final ChapKeyStore keys;
    private final SecureRandom random;
    private final AtomicReference<ChapSettings> settings;

    public ChapAuthenticator(ChapKeyStore keys, SecureRandom random, ChapSettings settings) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.random = Objects.requireNonNull(random, "random");
        this.settings = new AtomicReference<>(Objects.requireNonNull(settings, "settings"));
    }

    public void update(ChapSettings next) {
        settings.set(Objects.requireNonNull(next, "settings"));
    }

    public ChapSettings settings() {
        return settings.get();
    }

    @Override
    public String method() {
        return METHOD;
    }

    @Override
    public AuthExchange initiate(String hostId) throws AuthException {
        String problem = HostIds.problem(hostId);
        if (problem != null) {
            throw new AuthException(Errno.EINVAL, "host id: " + problem);
        }
        HostKeys k = keys.lookup(hostId);
        if (k == null) {
            throw new AuthException(Errno.ENOKEY, "no CHAP key configured for host '" + hostId + "'");
        }
        return new HostExchange(hostId, k, settings.get(), random);
    }

    @Override
    public AuthExchange respond() {
        return new TargetExchange(keys, settings.get(), random);
    }

    @Override
    public String toString() {
        return "ChapAuthenticator[target.id=" + settings.get().targetId() + ", " + keys + "]";
    }
}
