package io.rnbd.testkit.block;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.SharedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * A stand-in for storage that several servers share, with what matters of Ceph RBD's exclusive
 * lock and blocklist, in memory: for tests of takeovers where no Ceph cluster runs (unit tests,
 * the rxe guest). {@code SharedDeviceContractTest} holds it and the RBD backend to the same rules.
 *
 * <p>One {@link Cluster} of images is shared by several backends (one per server). Every
 * {@link #openShared} is a new client of the cluster with its own identity ({@code fake:N});
 * an image has at most one lock holder. A takeover <em>fences</em> the holder's client, as
 * Ceph's blocklist does: every request of it that lands afterwards is refused with ESHUTDOWN,
 * including one submitted before the fence and held back ({@link SharedFake#hold()}) until after
 * it, which is how a stale write of a frozen server is met. A device that does not hold the
 * lock reads the image as it is and refuses changes with ENOLINK.
 *
 * <p>Parameters: {@code image} (default {@code image0}), {@code size} in bytes (default 1 MiB,
 * used when the image is made).
 */
public final class FakeSharedBackend implements BlockBackend {
    private final Cluster cluster;
    private final String type;

    /** Storage several servers reach: images, their locks, the fenced clients. */
    public static final class Cluster {
        private final Map<String, Image> images = new HashMap<>();
        private final Set<String> fenced = new HashSet<>();
        private final AtomicInteger clients = new AtomicInteger();
        private final List<SharedFake> devices = new ArrayList<>();
        private final LongSupplier wallClock;
        // guarded by itself: the gate takeovers wait at (holdTakeovers)
        private final Object gate = new Object();
        private boolean takeoversHeld;
        private int takeoversWaiting;

        public Cluster() {
            this(System::currentTimeMillis);
        }

        /** @param wallClock what a holder records as its "since" (ms since the epoch) */
        public Cluster(LongSupplier wallClock) {
            this.wallClock = wallClock;
        }

        /**
         * Every takeover from now on waits before it fences, as a blocklist's round trip to the
         * monitors makes it wait, until {@link #releaseTakeovers()}: the test decides what
         * arrives meanwhile, with no clock.
         */
        public void holdTakeovers() {
            synchronized (gate) {
                takeoversHeld = true;
            }
        }

        /** Lets the held takeovers go on, and the later ones pass. */
        public void releaseTakeovers() {
            synchronized (gate) {
                takeoversHeld = false;
                gate.notifyAll();
            }
        }

        /** Takeovers waiting at the gate now ({@link #holdTakeovers()}). */
        public int takeoversWaiting() {
            synchronized (gate) {
                return takeoversWaiting;
            }
        }

        private void passGate() throws BlockIoException {
            synchronized (gate) {
                takeoversWaiting++;
                try {
                    while (takeoversHeld) {
                        gate.wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new BlockIoException(Errno.EINTR, "interrupted");
                } finally {
                    takeoversWaiting--;
                }
            }
        }

        /** The bytes of {@code image} (made zeroed on first use). */
        public synchronized byte[] store(String image) {
            return image(image, 1 << 20).store;
        }

        /** The identity of {@code image}'s lock holder, "" if none. */
        public synchronized String owner(String image) {
            Image i = images.get(image);
            return i == null ? "" : i.owner;
        }

        public synchronized boolean isFenced(String identity) {
            return fenced.contains(identity);
        }

        /** Every shared device opened so far, oldest first. */
        public synchronized List<SharedFake> devices() {
            return List.copyOf(devices);
        }

        /** Another client (an {@code rbd} command, a VM) takes the lock without recording a server. */
        public synchronized String foreignLock(String image) {
            Image i = image(image, 1 << 20);
            String id = "foreign:" + clients.incrementAndGet();
            if (!i.owner.isEmpty()) {
                fenced.add(i.owner);
            }
            i.owner = id;
            return id;
        }

        private Image image(String name, int size) {
            return images.computeIfAbsent(name, n -> new Image(new byte[size]));
        }
    }

    private static final class Image {
        final byte[] store;
        String owner = "";
        /** The owner that recorded itself (server, since), as the RBD backend's image metadata does. */
        String recordedOwner = "";
        String server = "";
        long since;
        long generation;

        Image(byte[] store) {
            this.store = store;
        }
    }

    /** A backend of type {@code type} over {@code cluster}: give each server its own, over one cluster. */
    public FakeSharedBackend(Cluster cluster, String type) {
        this.cluster = cluster;
        this.type = type;
    }

    public Cluster cluster() {
        return cluster;
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        throw new BlockIoException(Errno.EOPNOTSUPP, "the shared stand-in opens only with ha = true");
    }

    @Override
    public SharedDevice openShared(Map<String, String> params) throws IOException {
        String name = params.getOrDefault("image", "image0");
        int size;
        try {
            size = Integer.parseInt(params.getOrDefault("size", Integer.toString(1 << 20)));
        } catch (NumberFormatException e) {
            throw new IOException("bad size");
        }
        synchronized (cluster) {
            Image image = cluster.image(name, size);
            SharedFake d = new SharedFake(cluster, image, name, "fake:" + cluster.clients.incrementAndGet());
            cluster.devices.add(d);
            return d;
        }
    }

    /** One client's open of an image. */
    public static final class SharedFake implements SharedDevice {
        private static final Capabilities CAPS = new Capabilities(true, true, true, true, true, true);
        private final Cluster cluster;
        private final Image image;
        private final String name;
        private final String identity;
        private final List<Runnable> held = new ArrayList<>();
        private boolean holding;
        private volatile boolean closed;

        SharedFake(Cluster cluster, Image image, String name, String identity) {
            this.cluster = cluster;
            this.image = image;
            this.name = name;
            this.identity = identity;
        }

        public String image() {
            return name;
        }

        public boolean isClosed() {
            return closed;
        }

        /** Hold every request from now on (a server frozen with IO on its way) until {@link #release()}. */
        public synchronized void hold() {
            holding = true;
        }

        /** Requests held so far ({@link #hold()}). */
        public synchronized int heldCount() {
            return held.size();
        }

        /** Let the held requests land now, in order, each checked as it lands. */
        public void release() {
            List<Runnable> run;
            synchronized (this) {
                holding = false;
                run = new ArrayList<>(held);
                held.clear();
            }
            run.forEach(Runnable::run);
        }

        @Override
        public String identity() {
            return identity;
        }

        @Override
        public boolean holds() throws IOException {
            synchronized (cluster) {
                if (cluster.fenced.contains(identity)) {
                    throw fencedError();
                }
                return image.owner.equals(identity);
            }
        }

        @Override
        public Holder holder() throws IOException {
            synchronized (cluster) {
                if (cluster.fenced.contains(identity)) {
                    throw fencedError();
                }
                return holderNow();
            }
        }

        private Holder holderNow() {
            boolean recorded = image.owner.equals(image.recordedOwner) && !image.owner.isEmpty();
            return new Holder(image.owner, recorded ? image.server : "", recorded ? image.since : 0, image.generation);
        }

        @Override
        public Holder takeOver(String server, Holder expected) throws IOException {
            cluster.passGate();
            synchronized (cluster) {
                if (cluster.fenced.contains(identity)) {
                    throw fencedError();
                }
                if (closed) {
                    throw new BlockIoException(Errno.ENODEV, "device closed");
                }
                if (image.owner.equals(identity)) {
                    return holderNow();
                }
                if (!image.owner.equals(expected.owner())) {
                    throw new BlockIoException(Errno.EAGAIN, name + ": held by " + image.owner + ", not "
                            + (expected.held() ? expected.owner() : "nobody"));
                }
                if (!image.owner.isEmpty()) {
                    cluster.fenced.add(image.owner);
                }
                image.owner = identity;
                image.recordedOwner = identity;
                image.server = server;
                image.since = cluster.wallClock.getAsLong();
                image.generation = Math.max(image.generation, expected.generation()) + 1;
                return holderNow();
            }
        }

        private BlockIoException fencedError() {
            return new BlockIoException(Errno.ESHUTDOWN, name + ": " + identity + " is fenced");
        }

        @Override
        public long size() {
            return image.store.length;
        }

        @Override
        public Capabilities capabilities() {
            return CAPS;
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            ByteBuffer d = dst.duplicate();
            return submit(false, () -> d.put(image.store, (int) offset, d.remaining()));
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            ByteBuffer s = src.duplicate();
            return submit(true, () -> s.get(image.store, (int) offset, s.remaining()));
        }

        /** Nothing is cached: a flush has nothing to do, on a standby as on the holder. */
        @Override
        public CompletableFuture<Void> flush() {
            return submit(false, () -> { });
        }

        @Override
        public CompletableFuture<Void> trim(long offset, long length) {
            return submit(true, () -> Arrays.fill(image.store, (int) offset, (int) (offset + length), (byte) 0));
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
            return trim(offset, length);
        }

        private CompletableFuture<Void> submit(boolean change, Runnable effect) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            Runnable land = () -> land(change, effect, f);
            synchronized (this) {
                if (holding) {
                    held.add(land);
                    return f;
                }
            }
            land.run();
            return f;
        }

        /** What a request meets when it reaches the storage: the fence, the lock, then the data. */
        private void land(boolean change, Runnable effect, CompletableFuture<Void> f) {
            BlockIoException refused = null;
            synchronized (cluster) {
                if (closed) {
                    refused = new BlockIoException(Errno.ENODEV, "device closed");
                } else if (cluster.fenced.contains(identity)) {
                    refused = fencedError();
                } else if (change && !image.owner.equals(identity)) {
                    refused = new BlockIoException(Errno.ENOLINK, name + ": " + identity + " does not hold the lock");
                } else {
                    effect.run();
                }
            }
            if (refused != null) {
                f.completeExceptionally(refused);
            } else {
                f.complete(null);
            }
        }

        /** Closing lets go of the lock, as rbd_close does. */
        @Override
        public void close() {
            synchronized (cluster) {
                closed = true;
                if (image.owner.equals(identity)) {
                    image.owner = "";
                }
            }
        }
    }
}
