package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.common.Errno;
import io.rnbd.nbd.gateway.internal.io.StreamChannel;
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
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The server side of the fixed newstyle handshake, up to the transmission phase. */
final class Negotiation {
    /** What the handshake agreed on. */
    record Result(String exportName, BlockDevice device, int transmissionFlags, boolean structuredReplies,
                  GatheringByteChannel out, ChannelInput in) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(Negotiation.class);
    private static final int CLIENT_FLAGS_KNOWN = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;
    /** Options carrying more data than this are a denial of service: hard disconnect. */
    private static final int MAX_OPTION_DATA = 64 * 1024;

    private final SocketChannel ch;
    private final TlsPolicy tls;
    private final int staging;
    /** The plain socket, or the TLS session once STARTTLS succeeded. */
    private GatheringByteChannel io;
    private ChannelInput in;
    private boolean secure;
    private final ExportLookup exports;
    private final String peer;
    private final ByteBuffer out = ByteBuffer.allocate(16 * 1024);
    private boolean noZeroes;
    private boolean structured;

    /**
     * @param tls     STARTTLS policy of the listener the client came through
     * @param staging size of the TLS session's input staging buffer
     */
    Negotiation(SocketChannel ch, ChannelInput in, ExportLookup exports, String peer, TlsPolicy tls, int staging) {
        this.ch = ch;
        this.io = ch;
        this.in = in;
        this.tls = tls;
        this.staging = staging;
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
            if (tls.required() && !secure && opt.option() != OPT_STARTTLS && opt.option() != OPT_ABORT) {
                if (opt.option() == OPT_EXPORT_NAME) {
                    // NBD_OPT_EXPORT_NAME has no error reply: the spec says disconnect.
                    throw new NbdProtoException(Errno.EACCES, "NBD_OPT_EXPORT_NAME without TLS, which is required");
                }
                error(opt.option(), REP_ERR_TLS_REQD, "TLS is required: send NBD_OPT_STARTTLS first");
                continue;
            }
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
                case OPT_STARTTLS:
                    startTls(opt);
                    break;
                default:
                    error(opt.option(), REP_ERR_UNSUP, "option " + opt.option() + " is not supported");
            }
        }
    }

    private void startTls(OptionHeader opt) throws IOException, NbdProtoException {
        if (!tls.offered()) {
            error(opt.option(), REP_ERR_UNSUP, "TLS is not configured on this listener");
            return;
        }
        if (secure) {
            error(opt.option(), REP_ERR_INVALID, "TLS is already on");
            return;
        }
        if (opt.length() != 0) {
            error(opt.option(), REP_ERR_INVALID, "NBD_OPT_STARTTLS takes no data");
            return;
        }
        reply(opt.option(), REP_ACK);
        if (in.buffered() > 0) {
            // Plaintext sent after STARTTLS and before the TLS handshake would be taken as if it
            // had come through TLS: the injection nbdkit and qemu guard against (CVE-2021-3716).
            throw new NbdProtoException(Errno.EPROTO, "data after NBD_OPT_STARTTLS before the TLS handshake");
        }
        SSLSocket s = (SSLSocket) tls.context().getSocketFactory().createSocket(ch.socket(), null, true);
        s.setUseClientMode(false);
        s.setEnabledProtocols(TlsPolicy.PROTOCOLS);
        s.setNeedClientAuth(tls.verifyPeer());
        // Bounded by the handshake deadline: it closes the socket under a stalled TLS handshake.
        s.startHandshake();
        StreamChannel c = new StreamChannel(s.getInputStream(), s.getOutputStream(), s);
        io = c;
        in = new ChannelInput(c, staging);
        secure = true;
        // Nothing negotiated in plaintext carries over (the NBD spec's rule for STARTTLS).
        structured = false;
        LOG.debug("{}: TLS {} {}", peer, s.getSession().getProtocol(), s.getSession().getCipherSuite());
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
        return new Result(name, dev, flags, structured, io, in);
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
        return new Result(req.name(), dev, flags, structured, io, in);
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
        ChannelOutput.writeFully(io, out);
    }
}
