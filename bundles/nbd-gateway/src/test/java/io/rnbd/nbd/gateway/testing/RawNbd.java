package io.rnbd.nbd.gateway.testing;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.nbd.proto.ClientFlags;
import io.rnbd.nbd.proto.GoRequest;
import io.rnbd.nbd.proto.Info;
import io.rnbd.nbd.proto.NbdProtoException;
import io.rnbd.nbd.proto.OptionHeader;
import io.rnbd.nbd.proto.OptionReplyHeader;
import io.rnbd.nbd.proto.Request;
import io.rnbd.nbd.proto.ServerGreeting;
import io.rnbd.nbd.transport.ChannelInput;
import io.rnbd.nbd.transport.ChannelOutput;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** A hand-driven NBD client for sending what a well-behaved client never would. */
public final class RawNbd implements AutoCloseable {
    public final SocketChannel ch;
    public final ChannelInput in;
    public int transmissionFlags;
    public long size;

    public RawNbd(InetSocketAddress addr) throws IOException {
        ch = SocketChannel.open(addr);
        in = new ChannelInput(ch, 64 * 1024);
    }

    /** Reads the server's greeting and answers nothing: a client stalled at the first step. */
    public ServerGreeting greeting() throws IOException, NbdProtoException {
        return ServerGreeting.decode(in.need(ServerGreeting.SIZE));
    }

    public ServerGreeting greet(int clientFlags) throws IOException, NbdProtoException {
        ServerGreeting g = greeting();
        ByteBuffer b = ByteBuffer.allocate(4);
        new ClientFlags(clientFlags).encode(b);
        send(b.flip());
        return g;
    }

    public void option(int option, ByteBuffer data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(OptionHeader.SIZE + (data == null ? 0 : data.remaining()));
        new OptionHeader(option, data == null ? 0 : data.remaining()).encode(b);
        if (data != null) {
            b.put(data);
        }
        send(b.flip());
    }

    public OptionReplyHeader optionReply(ByteBuffer dataOut) throws IOException, NbdProtoException {
        OptionReplyHeader h = OptionReplyHeader.decode(in.need(OptionReplyHeader.SIZE));
        ByteBuffer d = ByteBuffer.allocate(h.length());
        in.readFully(d);
        if (dataOut != null) {
            dataOut.clear();
            dataOut.put(d.flip()).flip();
        }
        return h;
    }

    /** Fixed newstyle + NBD_OPT_GO; optionally structured replies first. */
    public RawNbd go(String export, boolean structured) throws IOException, NbdProtoException {
        greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        if (structured) {
            option(OPT_STRUCTURED_REPLY, null);
            if (optionReply(null).type() != REP_ACK) {
                throw new IllegalStateException("structured replies refused");
            }
        }
        GoRequest g = new GoRequest(export, new int[] {INFO_BLOCK_SIZE});
        ByteBuffer b = ByteBuffer.allocate(g.encodedSize());
        g.encode(b);
        option(OPT_GO, b.flip());
        ByteBuffer data = ByteBuffer.allocate(64 * 1024);
        while (true) {
            OptionReplyHeader h = optionReply(data);
            if (h.type() == REP_ACK) {
                return this;
            }
            if (h.type() != REP_INFO) {
                throw new IllegalStateException(String.format("GO refused: 0x%08x", h.type()));
            }
            if (Info.decode(data) instanceof Info.Export e) {
                transmissionFlags = e.transmissionFlags();
                size = e.size();
            }
        }
    }

    public void request(int flags, int type, long handle, long offset, long length, ByteBuffer payload)
            throws IOException {
        ByteBuffer b = ByteBuffer.allocate(Request.SIZE + (payload == null ? 0 : payload.remaining()));
        new Request(flags, type, handle, offset, length).encode(b);
        if (payload != null) {
            b.put(payload);
        }
        send(b.flip());
    }

    public void send(ByteBuffer b) throws IOException {
        ChannelOutput.writeFully(ch, b);
    }

    /** Drops whatever the server still sends; true once it closed the connection (end of stream). */
    public boolean closedByServer() {
        try {
            while (in.await(1)) {
                in.skip(in.need(1).remaining());
            }
            return true;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
