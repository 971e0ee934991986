package io.rnbd.rtrs.api;

import io.rnbd.common.Errno;
import java.io.IOException;

/**
 * An RTRS admin operation refused, with the Linux errno that says why; the message starts with
 * the errno's name ({@code EINVAL: unknown authenticator 'x' ...}), as RNBD's admin services
 * report theirs, so the console prints it and JMX returns it as it is.
 *
 * @since 1.10
 */
public class RtrsAdminException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public RtrsAdminException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = Math.abs(errno);
    }

    public RtrsAdminException(int errno, String message, Throwable cause) {
        super(Errno.name(errno) + ": " + message, cause);
        this.errno = Math.abs(errno);
    }

    public int errno() {
        return errno;
    }
}
