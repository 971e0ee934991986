package io.rnbd.rtrs.proto;

/** Protocol constants shared by client and server (rtrs-pri.h). */
public final class Rtrs {
    public static final int MAGIC = 0x1BBD;
    public static final int VERSION_MAJOR = 2;
    public static final int VERSION_MINOR = 0;
    /** (major << 8) | minor, as the kernel puts it on the wire. */
    public static final int VERSION = (VERSION_MAJOR << 8) | VERSION_MINOR;
    public static final int MAX_PATHS = 128;
    public static final int SERVICE_QUEUE_DEPTH = 512;
    public static final int MAX_SESS_QUEUE_DEPTH = 65535;
    public static final int MIN_CHUNK_SIZE = 8192;
    /** Linux's rtrs-srv defaults (max_chunk_size, sess_queue_depth); the appliance's server has its own. */
    public static final int DEFAULT_CHUNK_SIZE = 128 * 1024;
    public static final int DEFAULT_QUEUE_DEPTH = 512;
    /** What this implementation's server offers as max_hdr_size (Linux: PAGE_SIZE, 4096 on x86). */
    public static final int MAX_HDR_SIZE = 4096;
    /** The largest max_hdr_size a peer may announce: PAGE_SIZE of Linux's 64 KiB-page machines. */
    public static final int MAX_PEER_HDR_SIZE = 64 * 1024;
    /** Room kept in a chunk for the user header and the trailer: max IO = chunk - 4 KiB. */
    public static final int CHUNK_RESERVE = 4096;
    public static final int MAX_SEGMENTS = 128;
    public static final int NAME_MAX = 255;
    public static final int DEFAULT_PORT = 1234;
    public static final int HB_INTERVAL_MS = 5000;
    public static final int HB_MISSED_MAX = 5;
    /**
     * IO requests, responses and heartbeats are posted unsignaled but for one in this many
     * per connection (the kernel's signal_interval): nothing waits for their send
     * completion, and the signaled one retires the send-queue slots of those before it.
     * Far below every send queue's depth (at least 2 x queue depth + 64).
     */
    public static final int SIGNAL_INTERVAL = 16;

    private Rtrs() {
    }

    /** Whether a peer's version can talk to us: only the major must match. */
    public static boolean compatible(int version) {
        return (version >>> 8) == VERSION_MAJOR;
    }
}
