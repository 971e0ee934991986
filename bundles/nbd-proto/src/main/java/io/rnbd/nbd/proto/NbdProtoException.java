package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;

/** Malformed NBD input: the stream cannot be trusted any more (or an option is invalid). */
public class NbdProtoException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public NbdProtoException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
