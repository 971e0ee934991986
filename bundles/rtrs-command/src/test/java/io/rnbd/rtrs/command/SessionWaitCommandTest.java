package io.rnbd.rtrs.command;

import static io.rnbd.rtrs.command.FakeClientAdmin.path;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.command.support.Out;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.apache.karaf.shell.api.console.Session;
import org.junit.jupiter.api.Test;

/** rtrs:session-wait on fake time: each poll's sleep of 200 ms moves the clock, nothing sleeps. */
class SessionWaitCommandTest {
    private long now;
    private final AtomicInteger polls = new AtomicInteger();

    /** The command over an admin that {@code state} gives for each poll (0, 1, ...); null = no RTRS client yet. */
    private SessionWaitCommand command(IntFunction<RtrsClientAdmin> state) {
        SessionWaitCommand c = new SessionWaitCommand();
        c.admin = () -> state.apply(polls.getAndIncrement());
        c.nanoTime = () -> now;
        c.sleeper = ms -> now += TimeUnit.MILLISECONDS.toNanos(ms);
        return c;
    }

    private static FakeClientAdmin appliance(PathState first, PathState second) {
        return new FakeClientAdmin().add("appliance", path("127.0.0.1", "127.0.0.1", first, 0),
                path("127.0.0.2", "127.0.0.2", second, 0));
    }

    private static Session session(boolean local) {
        return (Session) Proxy.newProxyInstance(Session.class.getClassLoader(), new Class<?>[] {Session.class},
                (p, m, a) -> m.getName().equals("get") && Session.IS_LOCAL.equals(a[0]) ? (local ? Boolean.TRUE : null)
                        : null);
    }

    @Test
    void saysWhereASessionStandsAndWaitsUntilEveryPathIsConnected() {
        SessionWaitCommand c = command(i -> i < 3 ? appliance(PathState.CONNECTING, PathState.CONNECTING)
                : i < 5 ? appliance(PathState.CONNECTED, PathState.CONNECTING)
                : appliance(PathState.CONNECTED, PathState.CONNECTED));
        assertEquals("session appliance: connected (0/2 paths), waiting up to 30 s ...\n"
                + "session appliance: connected (2/2 paths)\n", Out.run(c));
        assertEquals(6, polls.get());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1000), now);
    }

    @Test
    void aConnectedSessionIsOneLineAtOnce() {
        SessionWaitCommand c = command(i -> appliance(PathState.CONNECTED, PathState.CONNECTED));
        assertEquals("session appliance: connected (2/2 paths)\n", Out.run(c));
        assertEquals(0, now);
    }

    @Test
    void afterTheTimeoutItSaysWhereToLook() {
        SessionWaitCommand c = command(i -> appliance(PathState.CONNECTED, PathState.RECONNECTING));
        c.timeoutSec = 2;
        assertEquals("session appliance: connected (1/2 paths), waiting up to 2 s ...\n"
                + "session appliance: connected (1/2 paths) after 2 s: rtrs:paths appliance shows why\n", Out.run(c));
        assertEquals(TimeUnit.SECONDS.toNanos(2), now);
    }

    @Test
    void namedSessionsOnlyAndAnUnknownNameIsAnError() {
        FakeClientAdmin two = appliance(PathState.CONNECTED, PathState.CONNECTED)
                .add("blk1", path("10.0.0.1", "10.0.0.2", PathState.CONNECTING, 0));
        SessionWaitCommand c = command(i -> two);
        c.names = List.of("appliance");
        assertEquals("session appliance: connected (2/2 paths)\n", Out.run(c));
        c = command(i -> two);
        c.names = List.of("nope");
        assertEquals("Error: no session 'nope' (sessions: appliance, blk1)\n", Out.run(c));
        assertEquals("Error: the RTRS client is not running (bundle rtrs-client)\n", Out.run(command(i -> null)));
        assertEquals("no RTRS client session\n", Out.run(command(i -> new FakeClientAdmin())));
    }

    @Test
    void atTheConsolesStartItWaitsForTheClientAndSaysNothingElsewhere() {
        SessionWaitCommand c = command(i -> i < 10 ? null : appliance(PathState.CONNECTED, PathState.CONNECTED));
        c.console = true;
        c.session = session(false);
        assertEquals("", Out.run(c));
        assertEquals(0, polls.get(), "an ssh or bin/client session does not wait");

        c.session = session(true);
        assertEquals("session appliance: connected (2/2 paths)\n", Out.run(c));
        assertEquals(11, polls.get());
    }

    @Test
    void atTheConsolesStartAClientWithoutSessionsEndsTheWaitQuietly() {
        SessionWaitCommand c = command(i -> new FakeClientAdmin());
        c.console = true;
        c.session = session(true);
        assertEquals("", Out.run(c));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(SessionWaitCommand.NO_SESSION_GRACE_MS), now);

        now = 0;
        c = command(i -> null);
        c.console = true;
        c.session = session(true);
        c.timeoutSec = 3;
        assertEquals("", Out.run(c));
        assertEquals(TimeUnit.SECONDS.toNanos(3), now);
    }
}
