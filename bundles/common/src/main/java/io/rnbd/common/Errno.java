package io.rnbd.common;

/**
 * Linux errno values, used as the status of every layer (verbs, RTRS, RNBD) because the
 * kernel protocols carry them on the wire (IO_RSP's 9-bit errno, CON_RSP's errno).
 * Always positive here; the wire codecs take care of signs.
 */
public final class Errno {
    public static final int OK = 0;
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int E2BIG = 7;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ERANGE = 34;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int ETIME = 62;
    public static final int ENOLINK = 67;
    public static final int EPROTO = 71;
    public static final int EBADMSG = 74;
    public static final int EOVERFLOW = 75;
    public static final int EMSGSIZE = 90;
    public static final int EPROTONOSUPPORT = 93;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETDOWN = 100;
    public static final int ENETUNREACH = 101;
    public static final int ECONNABORTED = 103;
    public static final int ECONNRESET = 104;
    public static final int ENOBUFS = 105;
    public static final int EISCONN = 106;
    public static final int ENOTCONN = 107;
    public static final int ESHUTDOWN = 108;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTDOWN = 112;
    public static final int EHOSTUNREACH = 113;
    public static final int EALREADY = 114;
    public static final int ECANCELED = 125;
    public static final int ENOKEY = 126;
    public static final int EKEYEXPIRED = 127;
    public static final int EKEYREVOKED = 128;
    public static final int EKEYREJECTED = 129;

    private Errno() {
    }

    /** The symbolic name ("EKEYREJECTED") for logs and console output; "E<n>" if unknown. */
    public static String name(int errno) {
        int e = Math.abs(errno);
        switch (e) {
            case OK: return "OK";
            case EPERM: return "EPERM";
            case ENOENT: return "ENOENT";
            case EINTR: return "EINTR";
            case EIO: return "EIO";
            case ENXIO: return "ENXIO";
            case E2BIG: return "E2BIG";
            case EBADF: return "EBADF";
            case EAGAIN: return "EAGAIN";
            case ENOMEM: return "ENOMEM";
            case EACCES: return "EACCES";
            case EFAULT: return "EFAULT";
            case EBUSY: return "EBUSY";
            case EEXIST: return "EEXIST";
            case ENODEV: return "ENODEV";
            case EINVAL: return "EINVAL";
            case ENOSPC: return "ENOSPC";
            case EROFS: return "EROFS";
            case ERANGE: return "ERANGE";
            case ENOSYS: return "ENOSYS";
            case ENODATA: return "ENODATA";
            case ETIME: return "ETIME";
            case ENOLINK: return "ENOLINK";
            case EPROTO: return "EPROTO";
            case EBADMSG: return "EBADMSG";
            case EOVERFLOW: return "EOVERFLOW";
            case EMSGSIZE: return "EMSGSIZE";
            case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
            case EOPNOTSUPP: return "EOPNOTSUPP";
            case EADDRINUSE: return "EADDRINUSE";
            case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
            case ENETDOWN: return "ENETDOWN";
            case ENETUNREACH: return "ENETUNREACH";
            case ECONNABORTED: return "ECONNABORTED";
            case ECONNRESET: return "ECONNRESET";
            case ENOBUFS: return "ENOBUFS";
            case EISCONN: return "EISCONN";
            case ENOTCONN: return "ENOTCONN";
            case ESHUTDOWN: return "ESHUTDOWN";
            case ETIMEDOUT: return "ETIMEDOUT";
            case ECONNREFUSED: return "ECONNREFUSED";
            case EHOSTDOWN: return "EHOSTDOWN";
            case EHOSTUNREACH: return "EHOSTUNREACH";
            case EALREADY: return "EALREADY";
            case ECANCELED: return "ECANCELED";
            case ENOKEY: return "ENOKEY";
            case EKEYEXPIRED: return "EKEYEXPIRED";
            case EKEYREVOKED: return "EKEYREVOKED";
            case EKEYREJECTED: return "EKEYREJECTED";
            default: return "E" + e;
        }
    }
}
