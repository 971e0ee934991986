package io.rnbd.rnbd.api;

/** A user's hold on a mapped device (see {@link RemoteBlockDevice#claim(String)}). */
@FunctionalInterface
public interface DeviceClaim extends AutoCloseable {
    /** Release the hold; idempotent. */
    @Override
    void close();
}
