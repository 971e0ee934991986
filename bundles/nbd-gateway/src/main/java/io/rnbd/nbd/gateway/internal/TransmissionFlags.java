package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.rnbd.api.Capabilities;

/** Transmission flags from a device's capabilities, the way nbdkit derives them from can_*. */
final class TransmissionFlags {
    private TransmissionFlags() {
    }

    static int of(Capabilities caps, boolean structuredReplies) {
        int f = FLAG_HAS_FLAGS;
        if (!caps.write()) {
            f |= FLAG_READ_ONLY;
        }
        if (caps.flush()) {
            f |= FLAG_SEND_FLUSH;
        }
        if (caps.write()) {
            // FUA without native support is emulated with a flush after the write.
            if (caps.fua() || caps.flush()) {
                f |= FLAG_SEND_FUA;
            }
            if (caps.trim()) {
                f |= FLAG_SEND_TRIM;
            }
            // Every device zeroes (emulating if it must); FAST_ZERO lets clients ask which.
            f |= FLAG_SEND_WRITE_ZEROES | FLAG_SEND_FAST_ZERO;
        }
        if (structuredReplies) {
            // A read is always answered with a single data chunk.
            f |= FLAG_SEND_DF;
        }
        if (caps.multiConn()) {
            f |= FLAG_CAN_MULTI_CONN;
        }
        return f;
    }
}
