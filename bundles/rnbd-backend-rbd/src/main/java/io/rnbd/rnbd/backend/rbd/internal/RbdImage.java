package io.rnbd.rnbd.backend.rbd.internal;

import java.nio.ByteBuffer;

/**
 * What a device needs of an open RBD image: asynchronous operations whose results come back
 * to the {@link Completions} listener as (cookie, result), on librbd's threads, or through
 * {@link #poll} where there is no listener. {@link NativeImage} is librbd; tests use a scripted
 * one.
 */
interface RbdImage {
    /** Called by librbd's threads (so: quick, and never into librbd's synchronous calls). */
    @FunctionalInterface
    interface Completions {
        /** {@code result}: bytes or 0 on success, -errno on failure. */
        void completed(long cookie, long result);
    }

    /** From now on completions go to {@code listener}; null: through {@link #poll}. */
    void listen(Completions listener);

    /** Starts {@code op} (an {@code RbdNative.OP_*}); 0, or -errno when it did not start. */
    int submit(int op, long cookie, long offset, long length, ByteBuffer buf, int flags);

    /**
     * Waits up to {@code timeoutMs} (-1 = no limit) for header changes and completions that no
     * listener took; fills
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
