package io.rnbd.rtrs.proto;

/** A malformed or incompatible wire message. Carries the errno to report (positive). */
public class ProtoException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public ProtoException(int errno, String message) {
        super(message);
        this.errno = Math.abs(errno);
    }

    public int errno() {
        return errno;
    }
}
