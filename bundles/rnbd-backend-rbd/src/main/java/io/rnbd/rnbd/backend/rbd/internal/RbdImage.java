package io.rnbd.rnbd.backend.rbd.internal;

import java.nio.ByteBuffer;

/**
 * What a device needs of an open RBD image: asynchronous operations whose results come back
 * through {@link #poll} as (cookie, result) pairs. {@link NativeImage} is librbd; tests use a
 * scripted one.
 */
interface RbdImage {
    /** Starts {@code op} (an {@code RbdNative.OP_*}); 0, or -errno when it did not start. */
    int submit(int op, long cookie, long offset, long length, ByteBuffer buf, int flags);

    /**
     * Waits up to {@code timeoutMs} (-1 = no limit) for completions and header changes; fills
     * {@code events} with (cookie, result) pairs, a header change as cookie
     * {@link RbdNative#COOKIE_UPDATED}; returns the number of pairs.
     */
    int poll(long[] events, int timeoutMs);

    /** Makes a waiting {@link #poll} return. */
    void wakeup();

    /** The image's current size in bytes (re-read after a header change). */
    long size() throws RbdException;

    void resize(long bytes) throws RbdException;

    /** Closes the image; waits for IO in flight. Completions stay pollable until {@link #free()}. */
    void close() throws RbdException;

    /** Releases everything; after {@link #close()} and the last {@link #poll}. */
    void free();
}
