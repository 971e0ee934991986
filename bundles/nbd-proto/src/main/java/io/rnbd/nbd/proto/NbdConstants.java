package io.rnbd.nbd.proto;

/** Magic numbers, option/reply/info/command codes and flags of the NBD protocol. */
public final class NbdConstants {
    /** ASCII "NBDMAGIC". */
    public static final long NBDMAGIC = 0x4e42444d41474943L;
    /** ASCII "IHAVEOPT": newstyle greeting and every option request. */
    public static final long IHAVEOPT = 0x49484156454F5054L;
    /** Option reply magic. */
    public static final long OPT_REPLY_MAGIC = 0x3e889045565a9L;
    public static final int REQUEST_MAGIC = 0x25609513;
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    public static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;

    public static final int DEFAULT_PORT = 10809;

    // Handshake flags (server, 16 bits).
    public static final int FLAG_FIXED_NEWSTYLE = 1;
    public static final int FLAG_NO_ZEROES = 1 << 1;
    // Client flags (32 bits).
    public static final int FLAG_C_FIXED_NEWSTYLE = 1;
    public static final int FLAG_C_NO_ZEROES = 1 << 1;

    // Transmission flags (16 bits).
    public static final int FLAG_HAS_FLAGS = 1;
    public static final int FLAG_READ_ONLY = 1 << 1;
    public static final int FLAG_SEND_FLUSH = 1 << 2;
    public static final int FLAG_SEND_FUA = 1 << 3;
    public static final int FLAG_ROTATIONAL = 1 << 4;
    public static final int FLAG_SEND_TRIM = 1 << 5;
    public static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    public static final int FLAG_SEND_DF = 1 << 7;
    public static final int FLAG_CAN_MULTI_CONN = 1 << 8;
    public static final int FLAG_SEND_RESIZE = 1 << 9;
    public static final int FLAG_SEND_CACHE = 1 << 10;
    public static final int FLAG_SEND_FAST_ZERO = 1 << 11;

    // Options.
    public static final int OPT_EXPORT_NAME = 1;
    public static final int OPT_ABORT = 2;
    public static final int OPT_LIST = 3;
    public static final int OPT_STARTTLS = 5;
    public static final int OPT_INFO = 6;
    public static final int OPT_GO = 7;
    public static final int OPT_STRUCTURED_REPLY = 8;
    public static final int OPT_LIST_META_CONTEXT = 9;
    public static final int OPT_SET_META_CONTEXT = 10;

    // Option reply types.
    public static final int REP_ACK = 1;
    public static final int REP_SERVER = 2;
    public static final int REP_INFO = 3;
    public static final int REP_META_CONTEXT = 4;
    public static final int REP_FLAG_ERROR = 1 << 31;
    public static final int REP_ERR_UNSUP = REP_FLAG_ERROR | 1;
    public static final int REP_ERR_POLICY = REP_FLAG_ERROR | 2;
    public static final int REP_ERR_INVALID = REP_FLAG_ERROR | 3;
    public static final int REP_ERR_PLATFORM = REP_FLAG_ERROR | 4;
    public static final int REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5;
    public static final int REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6;
    public static final int REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7;
    public static final int REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8;
    public static final int REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9;

    // NBD_INFO types (in NBD_REP_INFO and the NBD_OPT_INFO/GO request list).
    public static final int INFO_EXPORT = 0;
    public static final int INFO_NAME = 1;
    public static final int INFO_DESCRIPTION = 2;
    public static final int INFO_BLOCK_SIZE = 3;

    // Commands.
    public static final int CMD_READ = 0;
    public static final int CMD_WRITE = 1;
    public static final int CMD_DISC = 2;
    public static final int CMD_FLUSH = 3;
    public static final int CMD_TRIM = 4;
    public static final int CMD_CACHE = 5;
    public static final int CMD_WRITE_ZEROES = 6;
    public static final int CMD_BLOCK_STATUS = 7;

    // Command flags.
    public static final int CMD_FLAG_FUA = 1;
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    public static final int CMD_FLAG_DF = 1 << 2;
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // Structured replies.
    public static final int REPLY_FLAG_DONE = 1;
    public static final int REPLY_TYPE_NONE = 0;
    public static final int REPLY_TYPE_OFFSET_DATA = 1;
    public static final int REPLY_TYPE_OFFSET_HOLE = 2;
    public static final int REPLY_TYPE_BLOCK_STATUS = 5;
    public static final int REPLY_TYPE_FLAG_ERROR = 1 << 15;
    public static final int REPLY_TYPE_ERROR = REPLY_TYPE_FLAG_ERROR | 1;
    public static final int REPLY_TYPE_ERROR_OFFSET = REPLY_TYPE_FLAG_ERROR | 2;

    // Error values (the only ones allowed on the wire).
    public static final int EPERM = 1;
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOVERFLOW = 75;
    public static final int ENOTSUP = 95;
    public static final int ESHUTDOWN = 108;

    /** Longest string (export name, message) the protocol allows. */
    public static final int MAX_STRING = 4096;
    /** Largest READ/WRITE payload every client and server must accept (2^25). */
    public static final int MAX_PAYLOAD = 32 * 1024 * 1024;

    private NbdConstants() {
    }
}
