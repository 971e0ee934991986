package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.BlockBackend;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's configuration as it comes and goes: the exports, and the backend services
 * that serve them. An export goes online on the first backend of its type, offline when
 * that backend goes (over to the next one if there is one), and is opened again every
 * {@code open.retry.ms} while its backend fails to open it. While the server is new, OPENs
 * of an export that is not there yet wait here for it ({@code open.grace.ms}).
 *
 * <p>Adds, removes and backend changes all hold one lock ({@link #lifecycle}); lookups on
 * the request path take none.
 */
final class ExportTable {
    private static final Logger LOG = LoggerFactory.getLogger(ExportTable.class);
    private final ScheduledExecutorService scheduler;
    private final HaSettings ha;
    private final Object lifecycle = new Object();
    private final Map<String, Export> exports = new ConcurrentHashMap<>();
    private final Map<String, List<BlockBackend>> backends = new HashMap<>();
    /** How each backend service was registered, for the console; guarded by lifecycle. */
    private final Map<BlockBackend, Provider> providers = new java.util.IdentityHashMap<>();
    /**
     * OPENs of an export that is not there, parked while the server is new (see
     * {@link #openGraceMs}); retried whenever an export is added. Guarded by lifecycle.
     */
    private final List<Runnable> parkedOpens = new ArrayList<>();
    /** Guarded by lifecycle. */
    private boolean openGrace;
    /**
     * Exports removed while no backend of their type ran, by type: their backend is told to
     * release them ({@link BlockBackend#release}) when one comes. Guarded by lifecycle.
     */
    private final Map<String, List<String>> unreleased = new HashMap<>();
    /**
     * Exports added so far; written under lifecycle. An OPEN reads it before its lookup and
     * hands it to {@link #park}: an add between the two (which found nothing parked to wake)
     * shows as a changed count, and the OPEN is tried again at once instead of waiting out
     * the grace (SwapIT: an RNBD server restart stalled one device 10 s on that window).
     */
    private volatile long added;
    /** How often an export whose backend failed to open is tried again; 0 = only on a config or backend change. */
    private volatile long openRetryMs = RnbdServer.DEFAULT_OPEN_RETRY_MS;
    /** The pending retry of failed opens, if any; guarded by {@link #lifecycle}. */
    private ScheduledFuture<?> retry;

    ExportTable(ScheduledExecutorService scheduler) {
        this(scheduler, new HaSettings());
    }

    ExportTable(ScheduledExecutorService scheduler, HaSettings ha) {
        this.scheduler = scheduler;
        this.ha = ha;
    }

    /** @throws IllegalStateException if an export of that name, or at that path, exists */
    void add(ExportConfig config) {
        List<Runnable> parked;
        synchronized (lifecycle) {
            Export e = new Export(config, scheduler, ha, this::reopen);
            Export samePath = at(config.publishedPath());
            if (samePath != null) {
                throw new IllegalStateException("export " + config.name() + ": export " + samePath.name()
                        + " is already published at " + config.publishedPath());
            }
            if (exports.containsKey(config.name())) {
                throw new IllegalStateException("export " + config.name() + " already exists");
            }
            // online before it can be found: an OPEN racing the add (a parked one, or any) must
            // not meet the export without its backend (ENODEV). Adds and removes all hold
            // lifecycle, so the name is still free below.
            BlockBackend b = currentBackend(config.backend());
            if (b != null) {
                bringOnline(e, b);
            }
            exports.put(config.name(), e);
            added++;
            parked = takeParkedOpens();
        }
        parked.forEach(Runnable::run);
    }

    /** Under {@link #lifecycle}: open {@code e} on {@code b}, and try again later if that failed. */
    private void bringOnline(Export e, BlockBackend b) {
        if (!e.online(b)) {
            scheduleRetry();
        }
    }

    private void scheduleRetry() {
        long ms = openRetryMs;
        if (ms <= 0 || (retry != null && !retry.isDone())) {
            return;
        }
        try {
            retry = scheduler.schedule(this::retryFailedOpens, ms, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // the server is closing: nothing to bring online
        }
    }

    /**
     * Open again every export whose backend is there but failed to open it: a file export
     * whose file did not exist yet comes online once the file appears, an RBD export once the
     * cluster answers, without touching the configuration.
     */
    private void retryFailedOpens() {
        synchronized (lifecycle) {
            retry = null;
            for (Export e : exports.values()) {
                BlockBackend b = currentBackend(e.config().backend());
                if (b != null && e.openFailed()) {
                    bringOnline(e, b);
                }
            }
        }
    }

    /**
     * Another server took {@code e}'s storage over: close its fenced device and open the storage
     * again, a standby with a new identity (retried every {@code open.retry.ms} if that fails).
     */
    void reopen(Export e) {
        synchronized (lifecycle) {
            if (exports.get(e.name()) != e) {
                return; // removed meanwhile
            }
            e.offline("fenced: another server took the storage over; opening it again as a standby");
            BlockBackend b = currentBackend(e.config().backend());
            if (b != null) {
                bringOnline(e, b);
            }
        }
    }

    /** See {@link RnbdServer#openRetryMs}. */
    void openRetryMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("open.retry.ms must be >= 0: " + ms);
        }
        this.openRetryMs = ms;
        synchronized (lifecycle) {
            if (exports.values().stream().anyMatch(Export::openFailed)) {
                scheduleRetry();
            }
        }
    }

    /** See {@link RnbdServer#openGraceMs}. */
    void openGraceMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("open.grace.ms must be >= 0: " + ms);
        }
        if (ms == 0) {
            return;
        }
        synchronized (lifecycle) {
            openGrace = true;
        }
        scheduler.schedule(() -> {
            List<Runnable> parked;
            synchronized (lifecycle) {
                openGrace = false;
                parked = takeParkedOpens();
            }
            parked.forEach(Runnable::run);
        }, ms, TimeUnit.MILLISECONDS);
    }

    /** What {@link #park} needs to see whether an export came since (read it before the lookup). */
    long added() {
        return added;
    }

    /** What became of an OPEN that found no export. */
    enum Parked { NO, WAITS, RETRIED }

    /**
     * During the open grace, keep {@code retry} (an OPEN that found no export) until an export
     * is added or the grace ends (WAITS); if one was added since {@code seen} ({@link #added()}
     * before the OPEN's lookup), run {@code retry} now (RETRIED). NO once the grace is over.
     */
    Parked park(long seen, Runnable retry) {
        synchronized (lifecycle) {
            if (!openGrace) {
                return Parked.NO;
            }
            if (added == seen) {
                parkedOpens.add(retry);
                return Parked.WAITS;
            }
        }
        retry.run();
        return Parked.RETRIED;
    }

    /** OPENs waiting for their export (for tests). */
    int parkedOpens() {
        synchronized (lifecycle) {
            return parkedOpens.size();
        }
    }

    private List<Runnable> takeParkedOpens() {
        List<Runnable> taken = List.copyOf(parkedOpens);
        parkedOpens.clear();
        return taken;
    }

    /**
     * The export is removed from the configuration: closed, and its backend told to release
     * what it kept for it (a memory export's pages), at once or when a backend of its type
     * next comes.
     */
    void remove(String name) {
        synchronized (lifecycle) {
            Export e = close(name);
            if (e != null) {
                String type = e.config().backend();
                BlockBackend b = currentBackend(type);
                if (b != null) {
                    release(b, name);
                } else {
                    unreleased.computeIfAbsent(type, t -> new ArrayList<>()).add(name);
                }
            }
        }
    }

    /** Under lifecycle: take the export out and close it; what its backend kept stays. */
    private Export close(String name) {
        Export e = exports.remove(name);
        if (e != null) {
            for (Opening o : e.close()) {
                o.session().remove(o);
            }
        }
        return e;
    }

    private static void release(BlockBackend b, String name) {
        try {
            b.release(name);
        } catch (RuntimeException ex) {
            LOG.warn("export {}: backend failed to release it: {}", name, ex.toString());
        }
    }

    /** A backend service of {@code type} appeared; the first one of a type serves its exports. */
    void backendAdded(String type, BlockBackend backend) {
        backendAdded(type, backend, null);
    }

    /** The same, with the provider the console lists it as (null = none known). */
    void backendAdded(String type, BlockBackend backend, Provider provider) {
        synchronized (lifecycle) {
            if (provider != null) {
                providers.put(backend, provider);
            }
            List<BlockBackend> list = backends.computeIfAbsent(type, t -> new ArrayList<>());
            list.add(backend);
            if (list.get(0) == backend) {
                // first what was removed meanwhile, so that an export added again under the same name starts anew
                List<String> removed = unreleased.remove(type);
                if (removed != null) {
                    removed.forEach(name -> release(backend, name));
                }
                exportsOf(type).forEach(e -> bringOnline(e, backend));
            }
        }
    }

    /** A backend service went away: its exports go offline, or over to the next one of the type. */
    void backendRemoved(String type, BlockBackend backend) {
        synchronized (lifecycle) {
            providers.remove(backend);
            List<BlockBackend> list = backends.getOrDefault(type, new ArrayList<>());
            boolean wasCurrent = !list.isEmpty() && list.get(0) == backend;
            list.remove(backend);
            if (!wasCurrent) {
                return;
            }
            BlockBackend next = list.isEmpty() ? null : list.get(0);
            for (Export e : exportsOf(type)) {
                e.offline("backend '" + type + "' went away");
                if (next != null) {
                    bringOnline(e, next);
                }
            }
        }
    }

    /**
     * Every backend service with a known provider, by type, the serving one of a type first and
     * used by the type's exports (see {@link io.rnbd.rnbd.api.RnbdServerAdmin#backends}).
     */
    List<Provider> providers() {
        synchronized (lifecycle) {
            List<Provider> out = new ArrayList<>();
            backends.keySet().stream().sorted().forEach(type -> backends.get(type).forEach(b -> {
                Provider p = providers.get(b);
                if (p != null) {
                    // the serving one is used by the type's exports
                    out.add(b == backends.get(type).get(0)
                            ? p.usedBy(exportsOf(type).stream().map(Export::name).sorted().toList()) : p);
                }
            }));
            return out;
        }
    }

    /** The backend serving exports of {@code type} now, or null. */
    BlockBackend backend(String type) {
        synchronized (lifecycle) {
            return currentBackend(type);
        }
    }

    private BlockBackend currentBackend(String type) {
        List<BlockBackend> list = backends.get(type);
        return list == null || list.isEmpty() ? null : list.get(0);
    }

    private List<Export> exportsOf(String type) {
        return exports.values().stream().filter(e -> e.config().backend().equals(type)).toList();
    }

    Export get(String name) {
        return exports.get(name);
    }

    /** The export published at {@code path} (what an OPEN's device name resolves to), or null. */
    Export at(String path) {
        for (Export e : exports.values()) {
            if (e.config().publishedPath().equals(path)) {
                return e;
            }
        }
        return null;
    }

    Collection<Export> all() {
        return exports.values();
    }

    /**
     * Close every export (waiting IO fails); OPENs still parked are answered (ENOENT) now. The
     * exports are not removed: what their backends keep for them (a memory export's pages) is
     * there again for the next server.
     */
    void close() {
        List<Runnable> parked;
        synchronized (lifecycle) {
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            for (String name : List.copyOf(exports.keySet())) {
                close(name);
            }
            // no export comes any more
            openGrace = false;
            parked = takeParkedOpens();
        }
        parked.forEach(Runnable::run);
    }
}
