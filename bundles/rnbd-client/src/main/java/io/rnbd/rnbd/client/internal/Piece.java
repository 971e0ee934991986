package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.proto.Io;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rtrs.api.IoDone;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.nio.ByteBuffer;

/**
 * One piece of a request on the wire: sent with the device id of the moment, and sent
 * again when the server answers ENXIO because that id went stale (the kernel resends a
 * request after the remap the same way). It is its own completion callback, so a piece
 * costs the transport no lambda.
 */
final class Piece implements IoDone {
    /** A request that met a stale device id is sent again after the remap, at most this often. */
    private static final int MAX_RESENDS = 3;

    private final RnbdClientDevice device;
    private final DeviceIo.Request request;
    final int op;
    final int flags;
    final long offset;
    final int len;
    final ByteBuffer data;
    volatile int sentWith;
    int resends;

    Piece(RnbdClientDevice device, DeviceIo.Request request, int op, int flags, long offset, int len,
          ByteBuffer data) {
        this.device = device;
        this.request = request;
        this.op = op;
        this.flags = flags;
        this.offset = offset;
        this.len = len;
        this.data = data;
    }

    /** Post the piece on {@code rtrs} as device {@code id}. */
    void send(RtrsClientSession rtrs, int id) {
        sentWith = id;
        ByteBuffer hdr = Io.of(id, offset / OpenRsp.SECTOR_SIZE, op, flags, len).toBuffer();
        if (op == Io.OP_READ) {
            rtrs.read(hdr, data, this);
        } else {
            rtrs.write(hdr, data, this);
        }
    }

    /** The server's (or the transport's) answer. */
    @Override
    public void done(int errno) {
        if (errno == Errno.ENXIO && resends < MAX_RESENDS) {
            resends++;
            switch (device.onEnxio(this)) {
                case RESEND:
                    RnbdClientDevice.LOG.debug("device {}: request sent with stale id {} goes again", device.name(),
                            sentWith);
                    device.submit(this);
                    return;
                case REOPENED:
                    return;
                default:
                    break;
            }
        }
        finish(errno);
    }

    void finish(int errno) {
        request.pieceDone(errno);
    }
}
