package io.rnbd.rnbd.backend.rbd.internal;

import java.nio.ByteBuffer;

/**
 * The JNI library {@code librnbd-rbd.so} ({@code src/main/c/rbd_native.c}): librados and
 * librbd one call to one method, handles are C pointers. Loaded once per class loader; where
 * it cannot be loaded, {@link #unavailable()} says why and nothing here may be called.
 */
final class RbdNative {
    static final String LIBRARY = "rnbd-rbd";

    static final int OP_READ = 0;
    static final int OP_WRITE = 1;
    static final int OP_FLUSH = 2;
    static final int OP_DISCARD = 3;
    static final int OP_WRITE_ZEROES = 4;

    /** The cookie {@link #poll} reports a header change (resize ...) with; IO cookies start at 1. */
    static final long COOKIE_UPDATED = 0;

    /** librados' LIBRADOS_OP_FLAG_FADVISE_FUA: the write is durable when it completes. */
    static final int FLAG_FUA = 0x80;
    /**
     * Not a librados flag: OP_WRITE_ZEROES with RBD_WRITE_ZEROES_FLAG_THICK_PROVISION, the
     * range stays allocated (RNBD's NOUNMAP); rbd_native.c takes it out of the op flags.
     */
    static final int FLAG_THICK = 1 << 30;

    /** librbd's RBD_FEATURE_EXCLUSIVE_LOCK. */
    static final long FEATURE_EXCLUSIVE_LOCK = 1L << 2;

    private static final String UNAVAILABLE = load();

    private RbdNative() {
    }

    private static String load() {
        try {
            System.loadLibrary(LIBRARY);
            return null;
        } catch (UnsatisfiedLinkError e) {
            return reason(String.valueOf(e.getMessage()));
        }
    }

    /** Why the library did not load, as an operator should read it. */
    static String reason(String linkError) {
        if (linkError.contains("librbd.so") || linkError.contains("librados.so")) {
            return "librbd is not installed on this machine (apt-get install librbd1): " + linkError;
        }
        if (linkError.contains("no " + LIBRARY + " in")) {
            return "this build of rnbd-backend-rbd has no lib" + LIBRARY + ".so (it was built where the Ceph "
                    + "headers were missing; rebuild it with librbd-dev and librados-dev installed)";
        }
        if (linkError.contains("already loaded in another classloader")) {
            return "lib" + LIBRARY + ".so is still held by an earlier copy of this bundle; restart Karaf";
        }
        return "lib" + LIBRARY + ".so does not load: " + linkError;
    }

    /** {@code null} when the library is loaded, else the one-line reason it is not. */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /** librbd's version, e.g. {@code 1.16.0}. */
    static native String version();

    /**
     * rados_create(id) + rados_conf_read_file(conf; null: Ceph's search path) +
     * rados_conf_set of each (key, value) pair in {@code options} + rados_connect.
     */
    static native long connect(String conf, String id, String[] options) throws RbdException;

    static native void shutdown(long cluster);

    /** The cluster handle's value of a configuration option; null if there is no such option. */
    static native String confGet(long cluster, String key);

    static native long ioctx(long cluster, String pool) throws RbdException;

    static native void ioctxDestroy(long ioctx);

    /** rbd_create with the cluster's default format, features and object size. */
    static native void create(long ioctx, String name, long size) throws RbdException;

    static native long open(long ioctx, String name, boolean readOnly) throws RbdException;

    /** Completions go to {@code listener} on librbd's threads (attached to the JVM); null: through {@link #poll}. */
    static native void listen(long image, RbdImage.Completions listener);

    /** rbd_update_watch: every header change wakes {@link #poll} with {@link #COOKIE_UPDATED}. */
    static native void watch(long image) throws RbdException;

    /** Unwatch and rbd_close (waits for IO in flight); the completion list lives on until {@link #free}. */
    static native void close(long image) throws RbdException;

    static native void free(long image);

    static native long size(long image) throws RbdException;

    static native void resize(long image, long size) throws RbdException;

    static native long features(long image) throws RbdException;

    /** rbd_lock_acquire(EXCLUSIVE): from then on librbd does not hand the lock to others on request. */
    static native void lockAcquire(long image) throws RbdException;

    /** rbd_flush: waits until every write acknowledged so far is on the OSDs. */
    static native void flush(long image) throws RbdException;

    static native boolean lockOwned(long image) throws RbdException;

    /** The clients holding the image's lock, comma separated, "" if none. */
    static native String lockOwners(long image) throws RbdException;

    /** The image's effective value of an {@code rbd_*} option; null if unknown. */
    static native String imageConf(long image, String key);

    /** Starts one operation; 0, or -errno when it did not start (then no completion follows). */
    static native int submit(long image, int op, long cookie, long offset, long length, ByteBuffer buf, int pos,
                             int flags);

    /** Waits up to timeoutMs (-1 = no limit) and fills (cookie, result) pairs; returns the count. */
    static native int poll(long image, long[] events, int timeoutMs);

    /** Makes a waiting {@link #poll} return. */
    static native void wakeup(long image);
}
