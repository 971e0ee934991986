package io.rnbd.rdma.api;

import io.rnbd.common.Errno;

import java.io.IOException;

/** A verbs call refused synchronously, with the errno a C provider would return. */
public class RdmaException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public RdmaException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = Math.abs(errno);
    }

    public RdmaException(int errno, String message, Throwable cause) {
        super(Errno.name(errno) + ": " + message, cause);
        this.errno = Math.abs(errno);
    }

    /** Positive errno. */
    public int errno() {
        return errno;
    }
}
