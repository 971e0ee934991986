package io.rnbd.rnbd.api;

/** A subscription to a device's size changes ({@link BlockDevice#watchSize}); closing it ends it. */
@FunctionalInterface
public interface SizeWatch extends AutoCloseable {
    /** For devices whose size never changes behind their owner's back. */
    SizeWatch NONE = () -> { };

    @Override
    void close();
}
