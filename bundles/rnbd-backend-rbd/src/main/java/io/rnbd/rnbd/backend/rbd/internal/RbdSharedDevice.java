package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.api.SizeWatch;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RBD image that several appliance servers have open, of which the holder of its exclusive
 * lock writes ({@link SharedDevice}; docs/scale-out.md). IO is the {@link RbdBlockDevice}'s; this
 * adds the lock: a standby never calls {@code rbd_lock_acquire} before it is asked to take over
 * (librbd would then ask the holder for the lock, or break it if the holder's watch had
 * expired), and its device refuses changes. A takeover is {@code rbd_lock_break} of the holder,
 * which blocklists it and waits until this client's OSD map carries that, then
 * {@code rbd_lock_acquire}, then the record in the image's metadata ({@value #RECORD}:
 * {@code owner=... server=... since=... generation=...}), which every server reads to show who
 * is active since when and to hold off a takeover of a holder that has just taken over.
 */
final class RbdSharedDevice implements SharedDevice {
    /** The image metadata key of the holder's record; {@code rbd image-meta get POOL/IMAGE rnbd.holder} shows it. */
    static final String RECORD = "rnbd.holder";
    private static final Logger LOG = LoggerFactory.getLogger(RbdSharedDevice.class);

    private final RbdBlockDevice io;
    private final RbdLock lock;
    private final String identity;
    private final LongSupplier wallClock;

    RbdSharedDevice(RbdBlockDevice io, RbdLock lock, String identity, LongSupplier wallClock) {
        this.io = io;
        this.lock = lock;
        this.identity = identity;
        this.wallClock = wallClock;
        io.shared();
    }

    RbdBlockDevice device() {
        return io;
    }

    @Override
    public String identity() {
        return identity;
    }

    @Override
    public boolean holds() throws IOException {
        boolean owned = call("is the lock owner", lock::owned);
        io.mayChange(owned);
        return owned;
    }

    @Override
    public Holder holder() throws IOException {
        return call("read the lock owner", () -> holder(lock.owner(), lock.metadata(RECORD)));
    }

    /** The owner, with the record's server and time when the record is that owner's. */
    static Holder holder(String owner, String record) {
        Map<String, String> r = parse(record);
        long generation = parseLong(r.get("generation"));
        if (owner.isEmpty() || !owner.equals(r.get("owner"))) {
            return new Holder(owner, "", 0, generation);
        }
        return new Holder(owner, r.getOrDefault("server", ""), parseLong(r.get("since")), generation);
    }

    @Override
    public synchronized Holder takeOver(String server, Holder expected) throws IOException {
        return call("take the lock over", () -> {
            if (lock.owned()) {
                io.mayChange(true);
                return holder(lock.owner(), lock.metadata(RECORD));
            }
            String owner = lock.owner();
            if (!owner.equals(expected.owner())) {
                throw new RbdException(Errno.EAGAIN, "rbd_lock_get_owners (held by " + (owner.isEmpty() ? "nobody"
                        : owner) + ", not " + (expected.held() ? expected.owner() : "nobody") + ")");
            }
            if (!owner.isEmpty()) {
                try {
                    lock.breakLock(owner);
                } catch (RbdException e) {
                    throw e.errno() == Errno.EBUSY ? new RbdException(Errno.EAGAIN, e.call()) : e;
                }
                LOG.info("{}: broke the lock of {} and blocklisted it", io.name(), owner);
            }
            try {
                lock.acquire();
            } catch (RbdException e) {
                // another took it between the break and this: the next takeover sees who
                throw e.errno() == Errno.EROFS || e.errno() == Errno.EBUSY ? new RbdException(Errno.EAGAIN, e.call()) : e;
            }
            long generation = Math.max(expected.generation(), parseLong(parse(lock.metadata(RECORD)).get("generation")))
                    + 1;
            long since = wallClock.getAsLong();
            lock.metadata(RECORD, "owner=" + identity + " server=" + URLEncoder.encode(server, StandardCharsets.UTF_8)
                    + " since=" + since + " generation=" + generation);
            io.mayChange(true);
            return new Holder(identity, server, since, generation);
        });
    }

    private <T> T call(String what, RbdBlockDevice.RbdCall<T> call) throws BlockIoException {
        try {
            return io.whileOpen(call);
        } catch (RbdException e) {
            if (e.errno() == Errno.ESHUTDOWN) {
                io.mayChange(false);
            }
            String why = e.errno() == Errno.ESHUTDOWN ? " (fenced: another server took the image over and "
                    + "blocklisted this one)" : "";
            throw new BlockIoException(e.errno(), io.name() + ": " + what + ": " + e.getMessage() + why);
        }
    }

    private static Map<String, String> parse(String record) {
        Map<String, String> m = new HashMap<>();
        if (record == null) {
            return m;
        }
        for (String kv : record.trim().split("\\s+")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return m;
    }

    private static long parseLong(String v) {
        try {
            return v == null ? 0 : Long.parseLong(v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    // ---- the block device: the image's IO

    @Override
    public long size() {
        return io.size();
    }

    @Override
    public int logicalBlockSize() {
        return io.logicalBlockSize();
    }

    @Override
    public int physicalBlockSize() {
        return io.physicalBlockSize();
    }

    @Override
    public int maxIoSize() {
        return io.maxIoSize();
    }

    @Override
    public Capabilities capabilities() {
        return io.capabilities();
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return io.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return io.write(offset, src, fua);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return io.flush();
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return io.trim(offset, length);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return io.writeZeroes(offset, length, fua);
    }

    @Override
    public BlockPlug plug() {
        return io.plug();
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        return io.watchSize(listener);
    }

    @Override
    public CompletableFuture<Void> resize(long bytes) {
        return io.resize(bytes);
    }

    /** rbd_close lets go of the lock if this holds it; a fenced open closes all the same. */
    @Override
    public void close() {
        io.close();
    }
}
