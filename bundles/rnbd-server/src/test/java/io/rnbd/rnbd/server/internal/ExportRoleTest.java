package io.rnbd.rnbd.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rnbd.api.RnbdServerAdmin.HaInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.Role;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.api.SharedDevice.Holder;
import io.rnbd.testkit.FakeScheduler;
import io.rnbd.testkit.block.FakeSharedBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The role of one server alone, with what waits for the storage run on the caller's thread, so
 * that a read of the storage can be made to straddle a takeover exactly.
 */
class ExportRoleTest {
    private final AtomicLong wallClock = new AtomicLong(1_000_000_000L);
    private final FakeSharedBackend backend = new FakeSharedBackend(new FakeSharedBackend.Cluster(wallClock::get),
            "shared");
    private final FakeScheduler scheduler = new FakeScheduler();
    private final HaSettings settings = new HaSettings(new CallerRuns());
    private final ExportRole role = new ExportRole(new ExportRole.Owner() {
        @Override
        public String name() {
            return "vol";
        }

        @Override
        public void reopenAfterFence() {
            // not reached here: nobody fences this server
        }
    }, settings, scheduler, scheduler.nanoSource());

    @AfterEach
    void stop() {
        settings.close();
    }

    /**
     * Server A holds the image (generation 1). This server's first read of the holder is made,
     * then, before its answer is taken, this server takes the image over (generation 2); the
     * read's answer (A, generation 1) arrives last. The export must stay ACTIVE at generation 2,
     * as itself: an ACTIVE export that reported the fenced server's generation sent clients
     * that had left that generation away. (RbdHaIT once found a server ACTIVE whose generation,
     * asked right after, was not above the old holder's, and a second later was: this race
     * gives that, as did the test's own SSH race fixed with it.)
     */
    @Test
    void aHolderReadFromBeforeATakeoverThatLandsAfterItIsNotTaken() throws Exception {
        settings.server("B");
        settings.wallClock(wallClock::get);
        SharedDevice a = backend.openShared(Map.of("image", "vol"));
        assertEquals(1, a.takeOver("A", Holder.NONE).generation());
        wallClock.addAndGet(settings.holdoffMs() + 1);

        SharedDevice b = backend.openShared(Map.of("image", "vol"));
        AtomicReference<Holder> tookOver = new AtomicReference<>();
        // the first holder() read answers what the storage said when it was made, after the
        // takeover that overtook it has completed
        SharedDevice late = readOvertakenBy(b, () -> tookOver.set(role.takeOver("test").join()));
        role.opened(late);

        assertEquals(2, tookOver.get().generation(), "the takeover ran while the read was on its way");
        HaInfo info = role.info();
        assertEquals(Role.ACTIVE, info.role());
        assertEquals(2, info.generation(), "the stale read replaced the takeover's holder: " + info);
        assertEquals("B", info.activeServer());
    }

    /** A newer holder read is taken: the export follows a takeover by another server it was told nothing of. */
    @Test
    void aNewerHolderIsTaken() throws Exception {
        settings.wallClock(wallClock::get);
        SharedDevice b = backend.openShared(Map.of("image", "vol"));
        role.opened(b);
        assertEquals(0, role.info().generation());
        SharedDevice a = backend.openShared(Map.of("image", "vol"));
        a.takeOver("A", Holder.NONE);
        scheduler.advanceMillis(settings.probeMs()); // the probe reads the holder again
        HaInfo info = role.info();
        assertEquals(1, info.generation(), info.toString());
        assertEquals("A", info.activeServer());
        assertEquals(Role.STANDBY, info.role(), info.toString());
    }

    /** {@code d}, whose first {@code holder()} runs {@code meanwhile} between reading the storage and answering. */
    private static SharedDevice readOvertakenBy(SharedDevice d, Runnable meanwhile) {
        boolean[] first = {true};
        return (SharedDevice) Proxy.newProxyInstance(SharedDevice.class.getClassLoader(),
                new Class<?>[] {SharedDevice.class}, (proxy, method, args) -> {
                    try {
                        Object answer = method.invoke(d, args);
                        if (method.getName().equals("holder") && first[0]) {
                            first[0] = false;
                            meanwhile.run();
                        }
                        return answer;
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** The worker as the caller's own thread. */
    private static final class CallerRuns extends AbstractExecutorService {
        private volatile boolean shutdown;

        @Override
        public void execute(Runnable command) {
            command.run();
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }
}
