package io.rnbd.rxe.interop;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.client.internal.ClientSession;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Polls a path's state five times a second while a test cuts another path, and remembers every
 * reading that was not "connected": a path that must stay up, watched, not sampled at the end.
 */
final class PathWatch implements AutoCloseable {
    private final List<String> left = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService sampler;

    /** @param offState the path's state when it is not connected, else null */
    private PathWatch(String name, Supplier<String> offState) {
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watch " + name);
            t.setDaemon(true);
            return t;
        });
        // a task that throws is never run again: a reading that fails is a reading, not the end of the watch
        sampler.scheduleAtFixedRate(() -> {
            try {
                String s = offState.get();
                if (s != null) {
                    left.add(s);
                }
            } catch (RuntimeException e) {
                left.add("unreadable: " + e);
            }
        }, 0, 200, TimeUnit.MILLISECONDS);
    }

    /** A path of Linux's rtrs-client, by its sysfs directory. */
    static PathWatch linux(Path path) {
        return new PathWatch(path.getFileName().toString(), () -> {
            String s = LinuxRnbd.state(path);
            return "connected".equals(s) ? null : s;
        });
    }

    /** A path of the appliance's client session, by its name. */
    static PathWatch appliance(ClientSession session, String name) {
        return new PathWatch(name, () -> session.pathInfo().stream()
                .filter(p -> p.name().equals(name) && p.state() != PathState.CONNECTED)
                .map(p -> p.state() + " " + Errno.name(p.lastError())).findFirst().orElse(null));
    }

    List<String> leftConnected() {
        return List.copyOf(left);
    }

    @Override
    public void close() throws InterruptedException {
        sampler.shutdownNow();
        sampler.awaitTermination(5, TimeUnit.SECONDS);
    }
}
