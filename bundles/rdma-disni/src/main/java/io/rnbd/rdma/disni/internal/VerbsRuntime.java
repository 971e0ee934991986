package io.rnbd.rdma.disni.internal;

import java.util.Optional;

/** Whether DiSNI's native half (libdisni.so over rdma-core) can be used in this JVM. */
@FunctionalInterface
public interface VerbsRuntime {
    /** Empty when usable; else why not, in one line an operator can act on. */
    Optional<String> unavailableReason();
}
