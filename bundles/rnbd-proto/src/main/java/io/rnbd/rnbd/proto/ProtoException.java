package io.rnbd.rnbd.proto;

import io.rnbd.common.Errno;

/**
 * A malformed RNBD message. The errno is what a server answers with: EBADMSG for an
 * unknown or unexpected type, EMSGSIZE for a wrong length, EINVAL for a bad field value.
 */
public class ProtoException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public ProtoException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = Math.abs(errno);
    }

    public int errno() {
        return errno;
    }
}
