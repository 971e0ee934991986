package io.rnbd.nbd.proto;

import io.rnbd.common.Errno;

/** Maps our errnos to the few error values NBD allows on the wire, and back. */
public final class NbdErrors {
    private NbdErrors() {
    }

    /** The NBD error for a failed block operation's errno. */
    public static int toWire(int errno) {
        switch (Math.abs(errno)) {
            case Errno.OK: return 0;
            case Errno.EPERM:
            case Errno.EACCES:
            case Errno.EROFS:
                return NbdConstants.EPERM;
            case Errno.ENOMEM:
            case Errno.ENOBUFS:
                return NbdConstants.ENOMEM;
            case Errno.EINVAL:
            case Errno.ERANGE:
            case Errno.E2BIG:
            case Errno.EMSGSIZE:
            // NBD_ENOTSUP is reserved for fast-zero refusals; an unsupported op is a bad request.
            case Errno.EOPNOTSUPP:
            case Errno.ENOSYS:
                return NbdConstants.EINVAL;
            case Errno.ENOSPC:
                return NbdConstants.ENOSPC;
            case Errno.EOVERFLOW:
                return NbdConstants.EOVERFLOW;
            case Errno.ESHUTDOWN:
            case Errno.ENODEV:
                return NbdConstants.ESHUTDOWN;
            default:
                return NbdConstants.EIO;
        }
    }

    /** The errno for an NBD error received from a server; unknown values count as EINVAL (spec). */
    public static int fromWire(int nbdError) {
        switch (nbdError) {
            case 0: return Errno.OK;
            case NbdConstants.EPERM: return Errno.EPERM;
            case NbdConstants.EIO: return Errno.EIO;
            case NbdConstants.ENOMEM: return Errno.ENOMEM;
            case NbdConstants.EINVAL: return Errno.EINVAL;
            case NbdConstants.ENOSPC: return Errno.ENOSPC;
            case NbdConstants.EOVERFLOW: return Errno.EOVERFLOW;
            case NbdConstants.ENOTSUP: return Errno.EOPNOTSUPP;
            case NbdConstants.ESHUTDOWN: return Errno.ESHUTDOWN;
            default: return Errno.EINVAL;
        }
    }
}
