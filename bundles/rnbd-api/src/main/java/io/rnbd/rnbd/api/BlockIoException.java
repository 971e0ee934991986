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

    /**
     * A failure of {@code what} with the errno of {@code cause}, its reason (without the errno
     * name it may already start with) and {@code hint}: "EBUSY: rnbd0: rnbd0 is in use (...)".
     *
     * @since 1.11
     */
    public static BlockIoException of(String what, Throwable cause, String hint) {
        int errno = errnoOf(cause);
        String m = cause.getMessage() == null || cause.getMessage().isBlank() ? cause.getClass().getSimpleName()
                : cause.getMessage().replace('\n', ' ');
        String prefix = Errno.name(errno) + ": ";
        if (m.startsWith(prefix)) {
            m = m.substring(prefix.length());
        }
        return new BlockIoException(errno, what + ": " + m + hint, cause);
    }
}
