package io.rnbd.rnbd.api;

import io.rnbd.common.Errno;
import java.io.IOException;

/** A block operation failed with an errno (EIO, EROFS, EINVAL, ENOSPC, ...). */
public class BlockIoException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public BlockIoException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = Math.abs(errno);
    }

    public BlockIoException(int errno, String message, Throwable cause) {
        super(Errno.name(errno) + ": " + message, cause);
        this.errno = Math.abs(errno);
    }

    public int errno() {
        return errno;
    }

    /** The errno behind any failure of a block future: EIO if it was not a BlockIoException. */
    public static int errnoOf(Throwable t) {
        while (t != null) {
            if (t instanceof BlockIoException b) {
                return b.errno();
            }
            t = t.getCause();
        }
        return Errno.EIO;
    }
}
