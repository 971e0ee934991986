package io.rnbd.rnbd.api;

/**
 * A submission plug, as the block layer's {@code blk_plug}: IO that a thread submits to a
 * device while it holds one may be held back and sent together when it is closed (for an
 * RNBD device, one post per RTRS connection). Take it only around a burst of submissions
 * that are all ready, never around a wait: what it holds has not been sent.
 */
@FunctionalInterface
public interface BlockPlug extends AutoCloseable {
    /** For devices that send every request at once. */
    BlockPlug NONE = () -> { };

    /** Send what the plug held. Called by the thread that took the plug; throws nothing. */
    @Override
    void close();
}
