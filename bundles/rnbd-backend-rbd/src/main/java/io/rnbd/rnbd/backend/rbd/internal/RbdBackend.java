package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.SharedDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code rbd} backend: an export on a Ceph RBD image, through librbd. Each open connects
 * to the cluster on its own (one cephx client instance per export), opens the image, takes
 * its exclusive lock for writing, watches its header and hands back an {@link RbdBlockDevice}.
 * Where the JNI library cannot load, the backend is dormant: every open fails with the reason.
 */
public final class RbdBackend implements BlockBackend, AutoCloseable {
    public static final String TYPE = "rbd";
    private static final Logger LOG = LoggerFactory.getLogger(RbdBackend.class);

    private final RbdSettings settings;
    private final String unavailable;
    private final long closeWaitMs;
    private final Set<RbdBlockDevice> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** For {@link java.util.ServiceLoader}: tools outside OSGi. */
    public RbdBackend() {
        this(RbdSettings.DEFAULTS);
    }

    public RbdBackend(RbdSettings settings) {
        this(settings, RbdNative.unavailable(), RbdBlockDevice.CLOSE_WAIT_MS);
    }

    /**
     * @param unavailable why librbd cannot be used here, {@code null} if it can
     * @param closeWaitMs how long {@link #close()} waits for a cluster that does not answer
     */
    RbdBackend(RbdSettings settings, String unavailable, long closeWaitMs) {
        this.settings = settings;
        this.unavailable = unavailable;
        this.closeWaitMs = closeWaitMs;
    }

    /** {@code null} when the backend works, else why it is dormant (one line). */
    public String dormantReason() {
        return unavailable;
    }

    /** librbd's version, or {@code null} while dormant. */
    public String librbdVersion() {
        return unavailable == null ? RbdNative.version() : null;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        if (unavailable != null) {
            throw new IOException("rbd backend is dormant: " + unavailable);
        }
        if (closed) {
            throw new IOException("rbd backend is stopped");
        }
        RbdParams p = RbdParams.parse(params, settings);
        if (readOnly && p.createSize() != RbdParams.NO_CREATE) {
            throw new IOException("rbd backend: create.size needs a read-write export");
        }
        String where = "rbd backend: " + p.spec();
        long cluster = connect(p, where, false);
        long ioctx = 0;
        long image = 0;
        long size;
        RbdBlockDevice.Fua fua;
        try {
            ioctx = ioctx(cluster, p, where);
            image = openImage(ioctx, p, readOnly, where);
            if (!readOnly) {
                lock(image, p, where);
                cacheFromTheFirstWrite(image, where);
            }
            try {
                RbdNative.watch(image);
            } catch (RbdException e) {
                LOG.warn("{}: cannot watch the image header ({}): size changes made elsewhere go unseen",
                        p.spec(), e.getMessage());
            }
            size = RbdNative.size(image);
            if (size < 512) {
                throw new IOException(where + ": image of " + size + " bytes is smaller than one 512-byte block");
            }
            fua = fuaMode(image);
        } catch (IOException | RuntimeException e) {
            if (image != 0) {
                closeQuietly(image);
            }
            if (ioctx != 0) {
                RbdNative.ioctxDestroy(ioctx);
            }
            RbdNative.shutdown(cluster);
            throw e;
        }
        // from here on the device owns cluster, pool context and image
        RbdBlockDevice dev = new RbdBlockDevice(new NativeImage(cluster, ioctx, image), p.spec(), size, readOnly,
                fua, open::remove);
        open.add(dev);
        if (closed) {
            dev.close();
            throw new IOException("rbd backend is stopped");
        }
        LOG.info("opened {} as client.{} ({} bytes{}, FUA by {}, librbd {})", p.spec(), p.id(), size,
                readOnly ? ", read-only" : "", fua == RbdBlockDevice.Fua.FLAG ? "op flag" : "write + flush",
                RbdNative.version());
        return dev;
    }

    /**
     * An export of several servers ({@code ha = true}): the image opened read-write as a standby
     * that takes no lock ({@link RbdSharedDevice}). Its cluster connection is write-through
     * ({@code rbd_cache = false}): a takeover's successor reads from the OSDs, so whatever this
     * server acknowledged must be there when it dies, not in its cache; and it blocklists the
     * holder whose lock it breaks ({@code rbd_blocklist_on_break_lock = true}, whatever ceph.conf
     * says), which is what fences it. The image must have the exclusive-lock feature.
     */
    @Override
    public SharedDevice openShared(Map<String, String> params) throws IOException {
        if (unavailable != null) {
            throw new IOException("rbd backend is dormant: " + unavailable);
        }
        if (closed) {
            throw new IOException("rbd backend is stopped");
        }
        RbdParams p = RbdParams.parse(params, settings);
        String where = "rbd backend: " + p.spec();
        long cluster = connect(p, where, true);
        long ioctx = 0;
        long image = 0;
        long size;
        String identity;
        RbdBlockDevice.Fua fua;
        try {
            ioctx = ioctx(cluster, p, where);
            image = openImage(ioctx, p, false, where);
            if ((RbdNative.features(image) & RbdNative.FEATURE_EXCLUSIVE_LOCK) == 0) {
                throw new IOException(where + ": several servers need the image's exclusive lock, and it has no "
                        + "exclusive-lock feature (rbd feature enable " + p.spec() + " exclusive-lock)");
            }
            try {
                RbdNative.watch(image);
            } catch (RbdException e) {
                LOG.warn("{}: cannot watch the image header ({}): size changes made elsewhere go unseen",
                        p.spec(), e.getMessage());
            }
            size = RbdNative.size(image);
            if (size < 512) {
                throw new IOException(where + ": image of " + size + " bytes is smaller than one 512-byte block");
            }
            fua = fuaMode(image);
            identity = RbdNative.clientAddress(cluster);
        } catch (IOException | RuntimeException e) {
            if (image != 0) {
                closeQuietly(image);
            }
            if (ioctx != 0) {
                RbdNative.ioctxDestroy(ioctx);
            }
            RbdNative.shutdown(cluster);
            if (e instanceof RbdException r) {
                throw new IOException(where + ": " + r.getMessage());
            }
            throw e;
        }
        NativeImage handle = new NativeImage(cluster, ioctx, image);
        RbdBlockDevice dev = new RbdBlockDevice(handle, p.spec(), size, false, fua, open::remove);
        RbdSharedDevice shared = new RbdSharedDevice(dev, handle, identity, System::currentTimeMillis);
        open.add(dev);
        if (closed) {
            dev.close();
            throw new IOException("rbd backend is stopped");
        }
        LOG.info("opened {} as client.{} {} for several servers, as a standby ({} bytes, write-through, librbd {})",
                p.spec(), p.id(), identity, size, RbdNative.version());
        return shared;
    }

    /** The parameters alone: a dormant backend (no librbd) or an unreachable cluster is no reason to refuse them. */
    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        RbdParams p = RbdParams.parse(params, settings);
        if (readOnly && p.createSize() != RbdParams.NO_CREATE) {
            throw new IOException("rbd backend: create.size needs a read-write export");
        }
    }

    private static long connect(RbdParams p, String where, boolean shared) throws IOException {
        List<String> options = new ArrayList<>(List.of(
                // one-line errors come from here; Ceph's own messages must not reach the console
                "log_to_stderr", "false", "err_to_stderr", "false",
                "client_mount_timeout", Integer.toString(p.connectTimeoutSec()),
                // librbd skips the parts of a discard that do not cover whole 64 KiB units; the
                // block contract (and RNBD's DISCARD) wants the whole range to read back as zeros
                "rbd_skip_partial_discard", "false"));
        if (!p.keyring().isEmpty()) {
            options.addAll(List.of("keyring", p.keyring()));
        }
        if (shared) {
            options.addAll(List.of("rbd_cache", "false", "rbd_blocklist_on_break_lock", "true"));
        }
        if (p.opTimeoutSec() > 0) {
            // A request unanswered that long fails with ETIMEDOUT; whether it reached the disks is
            // unknown (as after any failed write). librbd's write-around cache would already
            // have acknowledged such a write, and seen here, the flush after it then reported
            // success while the OSD was stopped: without the cache every write answers for itself.
            options.addAll(List.of("rados_osd_op_timeout", Integer.toString(p.opTimeoutSec()),
                    "rados_mon_op_timeout", Integer.toString(p.opTimeoutSec()), "rbd_cache", "false"));
        }
        try {
            return RbdNative.connect(p.conf().isEmpty() ? null : p.conf(), p.id(), options.toArray(String[]::new));
        } catch (RbdException e) {
            throw new IOException(where + ": " + describeConnect(e, p));
        }
    }

    static String describeConnect(RbdException e, RbdParams p) {
        String conf = p.conf().isEmpty() ? "Ceph's default ceph.conf ($CEPH_CONF, /etc/ceph/ceph.conf)" : p.conf();
        String user = "client." + p.id();
        if (e.call().equals("rados_conf_read_file")) {
            return "cannot read " + conf + " (" + Errno.name(e.errno()) + "); give backend.conf";
        }
        if (e.call().equals("rados_conf_set")) {
            return "ceph.conf option refused (" + Errno.name(e.errno()) + ")";
        }
        return switch (e.errno()) {
            case Errno.ETIMEDOUT -> "no answer from the monitors of " + conf + " within " + p.connectTimeoutSec()
                    + " s (connect.timeout.sec)";
            case Errno.ENOENT -> "no keyring for " + user + " ("
                    + (p.keyring().isEmpty() ? "give backend.keyring" : p.keyring() + " has no key for it") + ")";
            case Errno.EACCES, Errno.EPERM -> "the cluster refused " + user + " (wrong key in "
                    + (p.keyring().isEmpty() ? "its keyring" : p.keyring()) + "?)";
            default -> e.getMessage();
        };
    }

    private static long ioctx(long cluster, RbdParams p, String where) throws IOException {
        try {
            return RbdNative.ioctx(cluster, p.pool());
        } catch (RbdException e) {
            throw new IOException(where + ": " + (e.errno() == Errno.ENOENT ? "no pool '" + p.pool() + "'"
                    : "pool '" + p.pool() + "': " + e.getMessage()));
        }
    }

    private static long openImage(long ioctx, RbdParams p, boolean readOnly, String where) throws IOException {
        try {
            return RbdNative.open(ioctx, p.image(), readOnly);
        } catch (RbdException e) {
            if (e.errno() != Errno.ENOENT) {
                throw new IOException(where + ": " + describeOpen(e, p));
            }
            if (p.createSize() == RbdParams.NO_CREATE) {
                throw new IOException(where + ": no such image" + (readOnly ? "" : " (give create.size= to create it)"));
            }
        }
        try {
            RbdNative.create(ioctx, p.image(), p.createSize());
            LOG.info("created {} ({} bytes)", p.spec(), p.createSize());
        } catch (RbdException e) {
            // EEXIST: another server created it in the meantime, which is as good
            if (e.errno() != Errno.EEXIST) {
                throw new IOException(where + ": create failed: " + describeOpen(e, p));
            }
        }
        try {
            return RbdNative.open(ioctx, p.image(), false);
        } catch (RbdException e) {
            throw new IOException(where + ": " + describeOpen(e, p));
        }
    }

    private static String describeOpen(RbdException e, RbdParams p) {
        return switch (e.errno()) {
            case Errno.EACCES, Errno.EPERM -> "client." + p.id() + " may not use it (cephx caps: "
                    + "mon 'profile rbd' osd 'profile rbd pool=" + p.pool() + "')";
            case Errno.ETIMEDOUT -> "no answer from the cluster within " + p.opTimeoutSec() + " s (op.timeout.sec)";
            default -> e.getMessage();
        };
    }

    /**
     * With exclusive-lock, take the lock now and keep it: librbd then refuses to hand it to
     * another client that asks (EROFS there), so two appliance servers never write one image
     * at once. A holder that died (kill -9) keeps it until its watch times out ({@code osd
     * client watch timeout}, 30 s by default); librbd then breaks it and blocklists the dead
     * client, which is what lets a second server take the image over.
     */
    private static void lock(long image, RbdParams p, String where) throws IOException {
        long features;
        try {
            features = RbdNative.features(image);
        } catch (RbdException e) {
            throw new IOException(where + ": " + e.getMessage());
        }
        if ((features & RbdNative.FEATURE_EXCLUSIVE_LOCK) == 0) {
            LOG.warn("{}: the image has no exclusive-lock feature: nothing keeps a second writer out "
                    + "(rbd feature enable {} exclusive-lock)", p.spec(), p.spec());
            return;
        }
        try {
            RbdNative.lockAcquire(image);
        } catch (RbdException e) {
            if (e.errno() == Errno.EROFS || e.errno() == Errno.EBUSY) {
                String owners;
                try {
                    owners = RbdNative.lockOwners(image);
                } catch (RbdException ignored) {
                    owners = "";
                }
                throw new IOException(where + ": locked by another client" + (owners.isEmpty() ? "" : " (" + owners
                        + ")") + ", another appliance server or rbd client writing it; it is released when that "
                        + "one closes the image, or after 'osd client watch timeout' when it died");
            }
            throw new IOException(where + ": taking the exclusive lock failed: " + describeOpen(e, p));
        }
    }

    /**
     * One flush before the first write, as fio's rbd engine does at open: librbd keeps its cache
     * write-through until it has seen a flush ({@code rbd_cache_writethrough_until_flush}), a
     * guard for guests that never flush because nobody told them of a cache. The appliance tells
     * every client: RNBD's open answer and the NBD gateway announce a volatile write cache (FLUSH
     * and FUA), and Linux, qemu and nbdcopy flush what they need kept. Without this flush a
     * client that had not flushed yet paid a round trip to the OSDs per write (docs/scale-out.md,
     * runs F to J: this backend's writes went from 0.44–0.58 of what fio's rbd engine gets to
     * 0.74–0.95). An operator who wants write-through configures it
     * ({@code rbd_cache = false} or {@code rbd_cache_policy = writethrough}); this flush changes
     * nothing there.
     */
    private static void cacheFromTheFirstWrite(long image, String where) throws IOException {
        try {
            RbdNative.flush(image);
        } catch (RbdException e) {
            throw new IOException(where + ": the first flush failed: " + e.getMessage());
        }
    }

    /**
     * librbd's default cache (writearound) honours the FUA op flag: such a write completes only
     * when the OSDs have it. The ObjectCacher (rbd_cache_policy=writeback) ignores the flag and
     * would acknowledge from memory, so there a FUA write is a write followed by a flush.
     */
    static RbdBlockDevice.Fua fuaMode(String cache, String policy) {
        boolean cached = cache == null || Boolean.parseBoolean(cache.trim());
        return cached && (policy == null || "writeback".equals(policy.trim()))
                ? RbdBlockDevice.Fua.FLUSH : RbdBlockDevice.Fua.FLAG;
    }

    private static RbdBlockDevice.Fua fuaMode(long image) {
        return fuaMode(RbdNative.imageConf(image, "rbd_cache"), RbdNative.imageConf(image, "rbd_cache_policy"));
    }

    private static void closeQuietly(long image) {
        try {
            RbdNative.close(image);
        } catch (RbdException e) {
            LOG.debug("closing after a failed open: {}", e.getMessage());
        }
        RbdNative.free(image);
    }

    /** Devices open now (for tests and status). */
    int openDevices() {
        return open.size();
    }

    /**
     * Closes every open device, all at once, and waits for them together at most
     * {@link RbdBlockDevice#CLOSE_WAIT_MS} (10 s): a cluster that does not answer delays the
     * stop of the bundle by that much, not by that much per export. Devices still waiting for
     * it close themselves (and end their thread) when it answers.
     */
    @Override
    public void close() {
        closed = true;
        List<RbdBlockDevice> devices = List.copyOf(open);
        devices.forEach(RbdBlockDevice::beginClose);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(closeWaitMs);
        for (RbdBlockDevice d : devices) {
            d.awaitClosed(deadline);
        }
    }
}
