package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AuthTest {
    @Test
    void rightKeyConnectsAndNamesTheHost() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            f.serverAuth.set(new SecretAuth("s3cret"));
            f.clientAuth.set(new SecretAuth("s3cret"));
            ClientSession s = f.open(f.config("auth-ok", f.path(f.dev1)));
            Await.until("connected", () -> s.state() == SessionState.CONNECTED);
            assertEquals(f.config("x", f.path(f.dev1)).hostId(), f.server.sessions().get(0).hostId());
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(512), w::complete);
            assertEquals(0, w.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void wrongKeyMeansExactlyOneAttemptAndAFailedSession() throws Exception {
        assertSingleAttempt(new SecretAuth("wrong"), Errno.EKEYREJECTED);
    }

    @Test
    void noKeyOnTheClientMeansEnokeyAndNoRetry() throws Exception {
        assertSingleAttempt(null, Errno.ENOKEY);
    }

    private static void assertSingleAttempt(SecretAuth clientAuth, int errno) throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            SecretAuth server = new SecretAuth("s3cret");
            f.serverAuth.set(server);
            f.clientAuth.set(clientAuth);
            FakeScheduler fake = new FakeScheduler();
            ClientSession s = f.open(f.config("auth-bad", f.path(f.dev1)), fake, fake.nanoSource());
            Await.until("failed", () -> s.state() == SessionState.FAILED);
            assertEquals(errno, s.lastError());
            fake.advance(Duration.ofHours(1)); // any reconnect timer would fire now
            assertEquals(SessionState.FAILED, s.state());
            assertEquals(clientAuth == null ? 0 : 1, server.responds.get(), "authentication attempts");
            assertEquals(1, s.pathInfo().get(0).reconnectAttempts());
            assertEquals(PathState.CONNECTING_ERR, s.pathInfo().get(0).state());
            assertEquals(errno, s.pathInfo().get(0).lastError());
            CompletableFuture<Integer> w = new CompletableFuture<>();
            s.write(MemoryOps.hdr(0), ByteBuffer.allocate(512), w::complete);
            assertEquals(Errno.EIO, w.get(5, TimeUnit.SECONDS));
            Await.until("server let go of the refused path", () -> f.server.sessions().isEmpty());
        }
    }

    @Test
    void serverWhoseConfiguredMethodIsNotRunningYetIsRetriedUntilItIs() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true))) {
            SecretAuth secret = new SecretAuth("s3cret");
            // the server is configured for this method but its bundle is not running: a
            // stand-in refuses with EAGAIN, never "no authentication"
            f.serverAuth.set(io.rnbd.rtrs.api.Authenticators.select(java.util.List.of(), secret.method()));
            f.clientAuth.set(new SecretAuth("s3cret"));
            FakeScheduler fake = new FakeScheduler();
            ClientSession s = f.open(f.config("auth-later", f.path(f.dev1)), fake, fake.nanoSource());
            Await.until("first attempt refused", () -> s.pathInfo().get(0).lastError() == Errno.EAGAIN);
            assertEquals(SessionState.CONNECTING, s.state(), "EAGAIN is not terminal");
            f.serverAuth.set(secret); // the bundle arrives
            // the reconnect timer (50 ms) fires, and not the new attempt's 30 s connect timeout
            // as well: on fake time that would start a second attempt on top of the first
            fake.advance(Duration.ofSeconds(1));
            Await.until("connected after the method appeared", () -> s.state() == SessionState.CONNECTED);
            assertEquals(1, secret.responds.get(), "authenticated by the real method");
        }
    }
}
