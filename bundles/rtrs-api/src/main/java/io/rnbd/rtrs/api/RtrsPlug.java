package io.rnbd.rtrs.api;

/**
 * A submission plug, as the block layer's {@code blk_plug}: the requests a thread submits
 * while it holds one may be held back and go out together when it is closed, each
 * connection's in one post. Take it only around a burst of submissions that are all
 * ready, never around a wait: what it holds is not on the wire.
 */
@FunctionalInterface
public interface RtrsPlug extends AutoCloseable {
    /** For sessions that send every request at once. */
    RtrsPlug NONE = () -> { };

    /** Send what the plug held. Called by the thread that took the plug; throws nothing. */
    @Override
    void close();
}
