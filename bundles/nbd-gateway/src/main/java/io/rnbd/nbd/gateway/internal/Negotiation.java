package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.gateway.proto.NbdConstants.*;

import io.rnbd.nbd.gateway.internal.io.ChannelInput;
import io.rnbd.nbd.gateway.internal.io.ChannelOutput;
import io.rnbd.nbd.gateway.proto.ClientFlags;
import io.rnbd.nbd.gateway.proto.ExportNameReply;
import io.rnbd.nbd.gateway.proto.GoRequest;
import io.rnbd.nbd.gateway.proto.Info;
import io.rnbd.nbd.gateway.proto.NbdProtoException;
import io.rnbd.nbd.gateway.proto.OptionHeader;
import io.rnbd.nbd.gateway.proto.OptionReplyHeader;
import io.rnbd.nbd.gateway.proto.ServerEntry;
import io.rnbd.nbd.gateway.proto.ServerGreeting;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The server side of the fixed newstyle handshake, up to the transmission phase. */
final class Negotiation {
    /** What the handshake agreed on. */
    record Result(String exportName, BlockDevice device, int transmissionFlags, boolean structuredReplies) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(Negotiation.class);
    private static final int CLIENT_FLAGS_KNOWN = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;
    /** Options carrying more data than this are a denial of service: hard disconnect. */
    private static final int MAX_OPTION_DATA = 64 * 1024;

    private final SocketChannel ch;
    private final ChannelInput in;
    private final ExportLookup exports;
    private final String peer;
    private final ByteBuffer out = ByteBuffer.allocate(16 * 1024);
    private boolean noZeroes;
    private boolean structured;

    Negotiation(SocketChannel ch, ChannelInput in, ExportLookup exports, String peer) {
        this.ch = ch;
        this.in = in;
        this.exports = exports;
        this.peer = peer;
    }

    /** Runs the handshake; null if the client aborted it. */
    Result run() throws IOException, NbdProtoException {
        out.clear();
        new ServerGreeting(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).encode(out);
        send();
        ClientFlags flags = ClientFlags.decode(in.need(ClientFlags.SIZE));
        if ((flags.flags() & ~CLIENT_FLAGS_KNOWN) != 0) {
            throw new NbdProtoException(Errno.EPROTO, String.format("unknown client flags 0x%08x", flags.flags()));
        }
        noZeroes = flags.has(FLAG_C_NO_ZEROES);
        while (true) {
            OptionHeader opt = OptionHeader.decode(in.need(OptionHeader.SIZE));
            if (opt.length() > MAX_OPTION_DATA) {
                throw new NbdProtoException(Errno.EMSGSIZE, "option " + opt.option() + " with " + opt.length()
                        + " bytes of data");
            }
            ByteBuffer data = ByteBuffer.allocate((int) opt.length());
            in.readFully(data);
            data.flip();
            switch (opt.option()) {
                case OPT_EXPORT_NAME: {
                    Result r = exportName(data);
                    if (r != null) {
                        return r;
                    }
                    break;
                }
                case OPT_ABORT:
                    reply(opt.option(), REP_ACK);
                    return null;
                case OPT_LIST:
                    list(opt);
                    break;
                case OPT_INFO:
                case OPT_GO: {
                    Result r = infoOrGo(opt.option(), data);
                    if (r != null && opt.option() == OPT_GO) {
                        return r;
                    }
                    break;
                }
                case OPT_STRUCTURED_REPLY:
                    if (opt.length() != 0) {
                        error(opt.option(), REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    } else {
                        structured = true;
                        reply(opt.option(), REP_ACK);
                    }
                    break;
                default:
                    error(opt.option(), REP_ERR_UNSUP, "option " + opt.option() + " is not supported");
            }
        }
    }

    private Result exportName(ByteBuffer data) throws IOException, NbdProtoException {
        String name = StandardCharsets.UTF_8.decode(data).toString();
        BlockDevice dev = exports.find(name);
        if (dev == null) {
            // NBD_OPT_EXPORT_NAME cannot fail politely: the spec says terminate the session.
            throw new NbdProtoException(Errno.ENOENT, "no export named '" + name + "'");
        }
        int flags = TransmissionFlags.of(dev.capabilities(), structured);
        out.clear();
        new ExportNameReply(dev.size(), flags).encode(out, noZeroes);
        send();
        return new Result(name, dev, flags, structured);
    }

    private void list(OptionHeader opt) throws IOException {
        if (opt.length() != 0) {
            error(opt.option(), REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
            return;
        }
        for (String name : exports.names()) {
            ServerEntry e = new ServerEntry(name, exports.describe(name));
            out.clear();
            new OptionReplyHeader(opt.option(), REP_SERVER, e.encodedSize()).encode(out);
            e.encode(out);
            send();
        }
        reply(opt.option(), REP_ACK);
    }

    private Result infoOrGo(int option, ByteBuffer data) throws IOException {
        GoRequest req;
        try {
            req = GoRequest.decode(data);
        } catch (NbdProtoException e) {
            error(option, REP_ERR_INVALID, e.getMessage());
            return null;
        }
        BlockDevice dev = exports.find(req.name());
        if (dev == null) {
            error(option, REP_ERR_UNKNOWN, "no export named '" + req.name() + "'");
            return null;
        }
        int flags = TransmissionFlags.of(dev.capabilities(), structured);
        info(option, new Info.Export(dev.size(), flags));
        // Always sent: the server enforces the minimum (alignment) and maximum (payload) sizes.
        int min = dev.logicalBlockSize();
        int preferred = Math.max(Math.max(min, 512), dev.physicalBlockSize());
        info(option, new Info.BlockSize(min, preferred, MAX_PAYLOAD));
        if (req.requested(INFO_NAME)) {
            info(option, new Info.Name(req.name()));
        }
        if (req.requested(INFO_DESCRIPTION)) {
            info(option, new Info.Description(exports.describe(req.name())));
        }
        reply(option, REP_ACK);
        return new Result(req.name(), dev, flags, structured);
    }

    private void info(int option, Info info) throws IOException {
        out.clear();
        new OptionReplyHeader(option, REP_INFO, info.encodedSize()).encode(out);
        info.encode(out);
        send();
    }

    private void reply(int option, int type) throws IOException {
        out.clear();
        new OptionReplyHeader(option, type, 0).encode(out);
        send();
    }

    private void error(int option, int type, String message) throws IOException {
        LOG.debug("{}: option {} refused: {}", peer, option, message);
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        int len = Math.min(m.length, 1024);
        // Cut on a character boundary: the message must stay valid UTF-8.
        while (len < m.length && len > 0 && (m[len] & 0xC0) == 0x80) {
            len--;
        }
        out.clear();
        new OptionReplyHeader(option, type, len).encode(out);
        out.put(m, 0, len);
        send();
    }

    private void send() throws IOException {
        out.flip();
        ChannelOutput.writeFully(ch, out);
    }
}
