package io.rnbd.nbd.client;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.common.Errno;
import io.rnbd.nbd.proto.ClientFlags;
import io.rnbd.nbd.proto.ExportNameReply;
import io.rnbd.nbd.proto.GoRequest;
import io.rnbd.nbd.proto.Info;
import io.rnbd.nbd.proto.NbdProtoException;
import io.rnbd.nbd.proto.OptionHeader;
import io.rnbd.nbd.proto.OptionReplyHeader;
import io.rnbd.nbd.proto.ServerEntry;
import io.rnbd.nbd.proto.ServerGreeting;
import io.rnbd.nbd.transport.ChannelInput;
import io.rnbd.nbd.transport.ChannelOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The client side of the fixed newstyle handshake. */
final class ClientHandshake {
    /** What the server told us about the export; block sizes are 0 when it did not say. */
    record Result(long size, int transmissionFlags, int minimumBlock, int preferredBlock, int maximumBlock) {
    }

    private final SocketChannel ch;
    private final ChannelInput in;
    private final ByteBuffer out = ByteBuffer.allocate(8 * 1024);
    private boolean fixed;
    private boolean noZeroes;

    ClientHandshake(SocketChannel ch, ChannelInput in) {
        this.ch = ch;
        this.in = in;
    }

    Result run(String exportName) throws IOException, NbdProtoException {
        greet();
        if (fixed) {
            Result r = go(exportName);
            if (r != null) {
                return r;
            }
        }
        return exportNameOption(exportName);
    }

    /** NBD_OPT_LIST, then NBD_OPT_ABORT: the names of the server's exports. */
    List<ServerEntry> list() throws IOException, NbdProtoException {
        greet();
        if (!fixed) {
            throw new NbdProtoException(Errno.EPROTONOSUPPORT, "server does not speak fixed newstyle");
        }
        send(new OptionHeader(OPT_LIST, 0), null);
        List<ServerEntry> entries = new ArrayList<>();
        while (true) {
            OptionReplyHeader h = OptionReplyHeader.decode(in.need(OptionReplyHeader.SIZE));
            ByteBuffer data = data(h, OPT_LIST);
            if (h.type() == REP_SERVER) {
                entries.add(ServerEntry.decode(data));
            } else if (h.type() == REP_ACK) {
                break;
            } else {
                throw refused(h, data, "NBD_OPT_LIST");
            }
        }
        send(new OptionHeader(OPT_ABORT, 0), null);
        return entries;
    }

    private void greet() throws IOException, NbdProtoException {
        ServerGreeting g = ServerGreeting.decode(in.need(ServerGreeting.SIZE));
        fixed = (g.handshakeFlags() & FLAG_FIXED_NEWSTYLE) != 0;
        noZeroes = fixed && (g.handshakeFlags() & FLAG_NO_ZEROES) != 0;
        out.clear();
        new ClientFlags((fixed ? FLAG_C_FIXED_NEWSTYLE : 0) | (noZeroes ? FLAG_C_NO_ZEROES : 0)).encode(out);
        flush();
    }

    /** NBD_OPT_GO; null if the server does not know it. */
    private Result go(String exportName) throws IOException, NbdProtoException {
        GoRequest req = new GoRequest(exportName, new int[] {INFO_BLOCK_SIZE});
        ByteBuffer body = ByteBuffer.allocate(req.encodedSize());
        req.encode(body);
        body.flip();
        send(new OptionHeader(OPT_GO, body.remaining()), body);
        Info.Export export = null;
        Info.BlockSize blocks = null;
        while (true) {
            OptionReplyHeader h = OptionReplyHeader.decode(in.need(OptionReplyHeader.SIZE));
            ByteBuffer data = data(h, OPT_GO);
            if (h.type() == REP_INFO) {
                Info info = Info.decode(data);
                if (info instanceof Info.Export e) {
                    export = e;
                } else if (info instanceof Info.BlockSize b) {
                    blocks = b;
                }
            } else if (h.type() == REP_ACK) {
                if (export == null) {
                    throw new NbdProtoException(Errno.EPROTO, "NBD_OPT_GO succeeded without NBD_INFO_EXPORT");
                }
                return blocks == null
                        ? new Result(export.size(), export.transmissionFlags(), 0, 0, 0)
                        : new Result(export.size(), export.transmissionFlags(), blocks.minimum(), blocks.preferred(),
                                blocks.maximum());
            } else if (h.type() == REP_ERR_UNSUP) {
                return null;
            } else {
                throw refused(h, data, "export '" + exportName + "'");
            }
        }
    }

    private Result exportNameOption(String exportName) throws IOException, NbdProtoException {
        ByteBuffer name = ByteBuffer.wrap(exportName.getBytes(StandardCharsets.UTF_8));
        send(new OptionHeader(OPT_EXPORT_NAME, name.remaining()), name);
        ExportNameReply r = ExportNameReply.decode(in.need(ExportNameReply.SIZE));
        if (!noZeroes) {
            in.skip(ExportNameReply.ZEROES);
        }
        return new Result(r.size(), r.transmissionFlags(), 0, 0, 0);
    }

    private ByteBuffer data(OptionReplyHeader h, int option) throws IOException, NbdProtoException {
        if (h.option() != option) {
            throw new NbdProtoException(Errno.EPROTO, "reply to option " + h.option() + " while waiting for "
                    + option);
        }
        ByteBuffer data = ByteBuffer.allocate(h.length());
        in.readFully(data);
        return data.flip();
    }

    private static NbdProtoException refused(OptionReplyHeader h, ByteBuffer data, String what) {
        String msg = StandardCharsets.UTF_8.decode(data).toString();
        int errno;
        switch (h.type()) {
            case REP_ERR_UNKNOWN: errno = Errno.ENOENT; break;
            case REP_ERR_POLICY:
            case REP_ERR_TLS_REQD: errno = Errno.EACCES; break;
            case REP_ERR_SHUTDOWN: errno = Errno.ESHUTDOWN; break;
            case REP_ERR_UNSUP: errno = Errno.EOPNOTSUPP; break;
            case REP_ERR_INVALID: errno = Errno.EINVAL; break;
            default: errno = h.isError() ? Errno.EIO : Errno.EPROTO;
        }
        return new NbdProtoException(errno, "server refused " + what + String.format(" (reply 0x%08x)", h.type())
                + (msg.isEmpty() ? "" : ": " + msg));
    }

    private void send(OptionHeader h, ByteBuffer data) throws IOException {
        out.clear();
        h.encode(out);
        if (data != null) {
            out.put(data);
        }
        flush();
    }

    private void flush() throws IOException {
        out.flip();
        ChannelOutput.writeFully(ch, out);
    }
}
