package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import io.rnbd.rtrs.auth.chap.internal.ChapAuthenticator;
import io.rnbd.rtrs.auth.chap.internal.ChapHash;
import io.rnbd.rtrs.auth.chap.internal.ChapKeyStore;
import io.rnbd.rtrs.auth.chap.internal.ChapSettings;
import io.rnbd.rtrs.auth.chap.internal.DhGroup;
import io.rnbd.rtrs.auth.chap.internal.DhchapKey;
import io.rnbd.rtrs.auth.chap.internal.HostKeys;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The real rtrs-auth-chap authenticator driven by the transport over rdma-soft. */
class ChapOverSoftTest {
    static ChapAuthenticator chap(String hostId, String hostSecret, String ctrlSecret) throws Exception {
        ChapKeyStore store = new ChapKeyStore();
        store.setConfigKeys(Map.of(hostId, new HostKeys(DhchapKey.parse(hostSecret),
                ctrlSecret == null ? null : DhchapKey.parse(ctrlSecret))));
        return new ChapAuthenticator(store, new SecureRandom(),
                new ChapSettings("target0", List.of(ChapHash.SHA256), List.of(DhGroup.FFDHE2048)));
    }

    ClientConfig cfg(SoftFixture f, String name) {
        ClientConfig c = f.config(name, f.path(f.dev1));
        return new ClientConfig(c.sessionName(), c.paths(), c.mpPolicy(), c.maxReconnectAttempts(),
                c.reconnectDelayMs(), c.reconnectBackoffMs(), c.ioTimeoutMs(), c.consPerPath(), "host1",
                c.hbIntervalMs(), c.hbMissedMax());
    }

    @Test
    void mutualChapConnects() throws Exception {
        String host = ChapSecrets.generate(1, 32);
        String ctrl = ChapSecrets.generate(1, 32);
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            f.serverAuth.set(chap("host1", host, ctrl));
            f.clientAuth.set(chap("host1", host, ctrl));
            ClientSession s = f.open(cfg(f, "chap-ok"));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            assertEquals("host1", f.server.sessions().get(0).hostId());
        }
    }

    @Test
    void wrongChapKeyIsTerminalAfterOneAttempt() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            f.serverAuth.set(chap("host1", ChapSecrets.generate(1, 32), null));
            f.clientAuth.set(chap("host1", ChapSecrets.generate(1, 32), null));
            FakeScheduler fake = new FakeScheduler();
            ClientSession s = f.open(cfg(f, "chap-bad"), fake, fake.nanoSource());
            Await.until("failed", () -> s.state() == SessionState.FAILED);
            assertEquals(Errno.EKEYREJECTED, s.lastError());
            fake.advance(Duration.ofHours(1));
            assertEquals(1, s.pathInfo().get(0).reconnectAttempts());
            assertEquals(SessionState.FAILED, s.state());
        }
    }
}
