package io.rnbd.rnbd.api;

import java.io.IOException;

/**
 * A device that several servers have open at once and exactly one of them may change: the
 * holder of its lock in the storage behind it (RBD's exclusive lock). The storage, not the
 * servers' opinion of each other, says who that is (docs/scale-out.md, "Several servers, one
 * image").
 *
 * <p>{@link BlockBackend#openShared} opens one as a <em>standby</em>: reads are served from the
 * storage as it is and never move the lock; every change (write, discard, write-zeroes) fails
 * with ENOLINK until {@link #takeOver} made this opener the holder. A holder that another opener
 * took the device from is <em>fenced</em> by the storage (RBD: its client is blocklisted):
 * whatever it still sends fails (ESHUTDOWN from the storage, ENOLINK from this device), and it
 * learns it at its next IO or {@link #holds()}. A fenced device stays fenced: close it and open
 * a new one, which is a standby with a new identity.
 *
 * <p>Every method here waits for the storage: call them off IO threads.
 *
 * @since 1.9
 */
public interface SharedDevice extends BlockDevice {
    /**
     * Who holds the device, as the storage knows it.
     *
     * @param owner       the lock holder as the storage names it (RBD: its client address,
     *                    {@code 127.0.0.1:0/2484850395}); "" = nobody holds it
     * @param server      the server that recorded itself when it took the lock; "" = not
     *                    recorded, or the record belongs to an earlier holder
     * @param sinceMillis when that server took it (its wall clock), 0 if not recorded
     * @param generation  how often a server took the lock, counting this holder; 0 = never
     */
    record Holder(String owner, String server, long sinceMillis, long generation) {
        /** Nobody holds it, and no server ever recorded itself. */
        public static final Holder NONE = new Holder("", "", 0, 0);

        public Holder {
            owner = owner == null ? "" : owner;
            server = server == null ? "" : server;
        }

        public boolean held() {
            return !owner.isEmpty();
        }
    }

    /** This opener as the storage names lock owners (compare with {@link Holder#owner()}). */
    String identity();

    /** Whether this opener holds the lock now, asked of the storage: a fenced holder learns it here. */
    boolean holds() throws IOException;

    /** The current holder, from the storage. */
    Holder holder() throws IOException;

    /**
     * Make this opener the holder. If {@code expected} holds the lock, its lock is broken and
     * it is fenced first, and only once the storage refuses its IO (RBD: blocklisted and the
     * OSDs know) is the lock taken: nothing the old holder still sends can land afterwards.
     * {@code server} is recorded as the holder with the next generation.
     *
     * @param expected the holder this takeover means to replace ({@link #holder()} just before):
     *                 if another holds the lock meanwhile, nothing is broken and the takeover fails
     *                 with EAGAIN
     * @return the holder afterwards: this opener
     * @throws IOException a {@link BlockIoException}: EAGAIN (the holder changed), ESHUTDOWN
     *                     (this opener was fenced), or the storage's errno
     */
    Holder takeOver(String server, Holder expected) throws IOException;
}
