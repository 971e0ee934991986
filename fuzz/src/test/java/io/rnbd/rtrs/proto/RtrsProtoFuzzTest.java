package io.rnbd.rtrs.proto;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every RTRS decoder on bytes from the network: CM private data (CON_REQ, CON_RSP), what
 * arrives in receive buffers and chunks (INFO_REQ/RSP, RDMA_WRITE/READ trailers, RKEY_RSP,
 * AUTH, FENCE) and the IMM field. A decoder may only refuse with a {@link ProtoException};
 * what it accepts must re-encode to bytes that decode to the same record (no field lost or
 * invented). Any other exception, or a mismatch, is a finding.
 */
class RtrsProtoFuzzTest {

    @FuzzTest
    void privateData(byte[] data) {
        try {
            ConReq r = ConReq.decode(data);
            assertEquals(r, ConReq.decode(r.toBytes()));
        } catch (ProtoException refused) {
            // the only allowed failure
        }
        try {
            ConRsp r = ConRsp.decode(data);
            assertEquals(r, ConRsp.decode(r.toBytes()));
        } catch (ProtoException refused) {
            // the only allowed failure
        }
    }

    /** The first byte picks the decoder, the rest is the message (as the server peeks its type). */
    @FuzzTest
    void messages(byte[] data) {
        if (data.length == 0) {
            return;
        }
        ByteBuffer msg = ByteBuffer.wrap(data, 1, data.length - 1).slice().order(ByteOrder.LITTLE_ENDIAN);
        try {
            switch (Math.floorMod(data[0], 9)) {
                case 0 -> MsgType.peek(msg.duplicate());
                case 1 -> roundTrip(InfoReq.decode(msg.duplicate()), InfoReq::encode, InfoReq.SIZE, InfoReq::decode);
                case 2 -> {
                    InfoRsp r = InfoRsp.decode(msg.duplicate());
                    roundTrip(r, r::encode, r.size(), InfoRsp::decode);
                    int qd = 1 + Math.floorMod(data[0] >> 4, 8);
                    try {
                        assertEquals(qd, r.chunks(qd, 8192).size());
                    } catch (ProtoException refused) {
                        // descriptors that do not cover the queue depth
                    }
                }
                case 3 -> {
                    RdmaReadMsg r = RdmaReadMsg.decode(msg.duplicate());
                    roundTrip(r, r::encode, r.size(), RdmaReadMsg::decode);
                }
                case 4 -> roundTrip(RdmaWriteMsg.decode(msg.duplicate()), RdmaWriteMsg::encode, RdmaWriteMsg.SIZE,
                        RdmaWriteMsg::decode);
                case 5 -> roundTrip(RkeyRsp.decode(msg.duplicate()), RkeyRsp::encode, RkeyRsp.SIZE, RkeyRsp::decode);
                case 6 -> {
                    AuthMsg a = AuthMsg.decode(msg.duplicate());
                    ByteBuffer b = ByteBuffer.allocate(a.size()).order(ByteOrder.LITTLE_ENDIAN);
                    a.encode(b);
                    AuthMsg again = AuthMsg.decode(b.flip());
                    assertEquals(a.method(), again.method());
                    assertEquals(a.status(), again.status());
                    assertEquals(a.flags(), again.flags());
                    assertArrayEquals(a.data(), again.data());
                }
                case 7 -> roundTrip(FenceReq.decode(msg.duplicate()), FenceReq::encode, FenceReq.SIZE, FenceReq::decode);
                default -> roundTrip(FenceRsp.decode(msg.duplicate()), FenceRsp::encode, FenceRsp.SIZE,
                        FenceRsp::decode);
            }
        } catch (ProtoException refused) {
            // the only allowed failure
        }
    }

    interface Decoder<T> {
        T decode(ByteBuffer b) throws ProtoException;
    }

    interface Encoder<T> {
        void encode(T t, ByteBuffer b);
    }

    private static <T> void roundTrip(T r, Encoder<T> enc, int size, Decoder<T> dec) throws ProtoException {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        enc.encode(r, b);
        assertEquals(r, dec.decode(b.flip()));
    }

    private static <T> void roundTrip(T r, Consumer<ByteBuffer> enc, int size, Decoder<T> dec) throws ProtoException {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        enc.accept(b);
        assertEquals(r, dec.decode(b.flip()));
    }

    /** IMM: the checked decoders refuse or give fields that encode back to the same IMM. */
    @FuzzTest
    void imm(FuzzedDataProvider in) {
        int imm = in.consumeInt();
        int qd = in.consumeInt(1, Rtrs.MAX_SESS_QUEUE_DEPTH);
        try {
            int type = Imm.checkedType(imm);
            assertEquals(Imm.type(imm), type);
            assertEquals(imm, Imm.of(type, Imm.payload(imm)));
            int bits = Imm.offsetBits(qd);
            assertTrue(bits >= 0 && bits <= 28, "offset bits " + bits + " for queue depth " + qd);
            if (type == Imm.IO_REQ) {
                int buf = Imm.reqBufId(imm, bits);
                int off = Imm.reqOffset(imm, bits);
                assertTrue(buf >= 0 && off >= 0, "negative field of " + Integer.toHexString(imm));
                assertEquals(imm, Imm.ioReq(buf, off, bits));
            }
            if (type == Imm.IO_RSP || type == Imm.IO_RSP_W_INV) {
                int id = Imm.rspMsgId(imm);
                int errno = Imm.rspErrno(imm);
                assertTrue(id >= 0 && errno >= 0, "negative field of " + Integer.toHexString(imm));
                assertEquals(imm, Imm.ioRsp(id, errno, type == Imm.IO_RSP_W_INV));
            }
        } catch (ProtoException refused) {
            // an unknown type
        }
    }
}
