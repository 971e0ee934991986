package io.rnbd.rtrs.api;

import java.nio.ByteBuffer;

/**
 * An RTRS client session: one name, several paths, one pool of permits (the server's
 * queue depth) shared by all paths.
 *
 * <p>Requests are asynchronous. At most {@link #queueDepth()} are in flight; more wait
 * for a permit in arrival order. The caller must not touch a request's buffers until its
 * {@link IoDone} has run. {@code done} runs exactly once, on a transport thread, and must
 * not block.
 *
 * <p>The RTRS client registers every configured session as an OSGi service with the
 * property {@link #PROP_SESSION}, so upper layers find sessions by name.
 */
public interface RtrsClientSession extends AutoCloseable {
    /** Service property: the session name. */
    String PROP_SESSION = "rtrs.session";

    String name();

    SessionState state();

    /** Errno of the last terminal failure (e.g. EKEYREJECTED), 0 if none. */
    int lastError();

    /** Permits: the server's session queue depth, known once connected (0 before). */
    int queueDepth();

    /** Largest data part of one request (the server's chunk size minus 4 KiB). */
    int maxIoSize();

    /** Largest user header of one request. */
    int maxHdrSize();

    /**
     * Hold back the requests this thread submits until the returned plug is closed, then
     * send them together ({@link RtrsPlug}). A thread that already holds a plug on this
     * session gets {@link RtrsPlug#NONE}: the outer plug sends everything, as nested
     * {@code blk_start_plug} calls do.
     */
    default RtrsPlug plug() {
        return RtrsPlug.NONE;
    }

    /**
     * Send {@code usrHdr} and {@code data} (both position..limit) to the server, which
     * hands them to its upper layer as a write.
     */
    void write(ByteBuffer usrHdr, ByteBuffer data, IoDone done);

    /**
     * Send {@code usrHdr}; the server's upper layer answers with up to
     * {@code dst.remaining()} bytes, which land in {@code dst}.
     */
    void read(ByteBuffer usrHdr, ByteBuffer dst, IoDone done);

    /**
     * Fail now, with {@code errno}, every request that is not on a connected path: those
     * waiting for a permit or a path, and those a failed path had in flight that wait for its
     * fence ({@code io.timeout.ms} would fail them later). The session stays and reconnects; a
     * permit the server may still act on stays reserved until the fence, as after the timeout.
     * For an upper layer that sends the same requests to another server (rnbd-client's devices
     * over several servers); the default holds nothing back and has nothing to fail.
     *
     * @since 1.9
     */
    default void failOutstanding(int errno) {
    }

    void addListener(RtrsSessionListener listener);

    void removeListener(RtrsSessionListener listener);

    /** Close all paths; requests still waiting fail with ESHUTDOWN. */
    @Override
    void close();
}
