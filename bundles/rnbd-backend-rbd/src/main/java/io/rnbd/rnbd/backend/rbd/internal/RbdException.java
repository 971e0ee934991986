package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.common.Errno;
import java.io.IOException;

/** A librados/librbd call failed; thrown by the JNI library with the call's name and its errno. */
public final class RbdException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int errno;
    private final String call;

    public RbdException(int errno, String call) {
        super(call + ": " + Errno.name(errno));
        this.errno = errno;
        this.call = call;
    }

    public int errno() {
        return errno;
    }

    /** The librados/librbd function that failed, e.g. {@code rados_connect}. */
    public String call() {
        return call;
    }
}
