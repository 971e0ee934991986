package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatCmaIdPrivate;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;

/**
 * What DiSNI 2.1's Java API cannot do with the connection manager, done by natives in the
 * project's own libdisni.so: connect and accept with {@code conn_param} private data and
 * retry counts, reject with private data, and read a CM event's status and private data
 * (DiSNI's event has neither; libdisni keeps them for the event's id when it reads the
 * event, before acknowledging it).
 *
 * <p>The natives are bound by libdisni.so itself ({@code RegisterNatives}) when an event
 * channel is created with this class's loader as the thread's context class loader (see
 * {@link #bindWhile}): under OSGi DiSNI's bundle loads the library, and JNI would look for
 * this class's natives only in libraries of rdma-disni's loader.
 */
final class CmNative {
    /** The extension ABI this class expects of libdisni.so. */
    static final int ABI_VERSION = 7;

    /** What libdisni kept of a CM event: rdma_cm's status and the private data (possibly empty). */
    record EventData(int type, int status, byte[] privateData) {
    }

    private CmNative() {
    }

    /** rdma_connect with {@code privateData} (at most 56 bytes); 0 or an errno. */
    static native int connect(long cmId, byte[] privateData, int retryCount, int rnrRetryCount);

    /** rdma_accept with {@code privateData} (at most 196 bytes); 0 or an errno. */
    static native int accept(long cmId, byte[] privateData, int retryCount, int rnrRetryCount);

    /** rdma_reject with {@code privateData} (at most 148 bytes); 0 or an errno. */
    static native int reject(long cmId, byte[] privateData);

    /** Takes what was kept of the last event of {@code cmId}; {status, type} into {@code out}. */
    private static native byte[] takeEvent(long cmId, int[] out);

    /**
     * Waits up to {@code timeoutMs} for the completion channel's next event: the CQ that fired
     * (its {@code ibv_cq} pointer, the event acknowledged), 0 on a timeout. Not a connection
     * manager call, but an extension native all the same: DiSNI's own {@code getCqEvent} does
     * not say which CQ fired.
     */
    static native long cqEvent(long compChannel, int timeoutMs);

    private static native int abiVersion();

    /**
     * Runs {@code call} (one that creates a DiSNI event channel) with this class's loader as
     * the context class loader, so that libdisni.so binds the natives; then
     * {@link #checkBound()}.
     */
    static <T> T bindWhile(DisniDevice.CmCall<T> call) throws java.io.IOException {
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(CmNative.class.getClassLoader());
        try {
            return call.run();
        } finally {
            t.setContextClassLoader(before);
        }
    }

    /** @throws RdmaException ENOSYS when the installed libdisni.so lacks the natives (an old build) */
    static void checkBound() throws RdmaException {
        int abi;
        try {
            abi = abiVersion();
        } catch (UnsatisfiedLinkError e) {
            throw new RdmaException(Errno.ENOSYS, "libdisni.so has no connection manager extensions"
                    + " (built from an older rdma-disni): rebuild and install it");
        }
        if (abi != ABI_VERSION) {
            throw new RdmaException(Errno.ENOSYS, "libdisni.so extension ABI " + abi + ", rdma-disni needs "
                    + ABI_VERSION + ": install the libdisni.so built with this bundle");
        }
    }

    /** The cm_id pointer behind a DiSNI id, alive or not (for what libdisni kept by address). */
    static long handle(RdmaCmId id) {
        return ((NatCmaIdPrivate) id).getObjId();
    }

    /**
     * The cm_id pointer behind a DiSNI id that is still alive, for a native that dereferences
     * it; call under the device's CM lock, which destroys ids too. The CM thread reads an
     * event under that lock but dispatches it outside, so a teardown can destroy the id in
     * between: an rdma_connect on ROUTE_RESOLVED would then read freed memory (the guest
     * crash in ibv_query_device, rxe/README.md). DiSNI's own calls check the same flag.
     */
    static long liveHandle(RdmaCmId id) throws java.io.IOException {
        if (!id.isOpen()) {
            throw new RdmaException(Errno.EBADF, "CM id already destroyed");
        }
        return handle(id);
    }

    /** Takes what libdisni kept of {@code id}'s last event; null when nothing (or no id). */
    static EventData take(RdmaCmId id) {
        if (!(id instanceof NatCmaIdPrivate)) {
            return null;
        }
        int[] out = new int[2];
        byte[] data = takeEvent(handle(id), out);
        return data == null ? null : new EventData(out[1], out[0], data);
    }

    /** Throws the errno a native call returned, if any, the way libdisni reports errors (see {@link Errors}). */
    static void check(int errno, String what) throws java.io.IOException {
        if (errno != 0) {
            throw new java.io.IOException(what + " failed: " + Errno.name(errno) + " (errno " + errno + ")");
        }
    }
}
