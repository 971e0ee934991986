package io.rnbd.rnbd.proto;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every RNBD decoder on a user header as it arrives in a chunk: the first byte picks the
 * decoder, the rest is the message. Only a {@link ProtoException} may refuse it; what is
 * accepted must re-encode to bytes that decode to the same record.
 */
class RnbdProtoFuzzTest {

    @FuzzTest
    void messages(byte[] data) {
        if (data.length == 0) {
            return;
        }
        ByteBuffer msg = ByteBuffer.wrap(data, 1, data.length - 1).slice().order(ByteOrder.LITTLE_ENDIAN);
        try {
            switch (Math.floorMod(data[0], 7)) {
                case 0 -> MsgType.peek(msg.duplicate());
                case 1 -> roundTrip(SessInfo.decode(msg.duplicate()), SessInfo.SIZE, SessInfo::decode);
                case 2 -> roundTrip(SessInfoRsp.decode(msg.duplicate()), SessInfoRsp.SIZE, SessInfoRsp::decode);
                case 3 -> roundTrip(Open.decode(msg.duplicate()), Open.SIZE, Open::decode);
                case 4 -> roundTrip(OpenRsp.decode(msg.duplicate()), OpenRsp.SIZE, OpenRsp::decode);
                case 5 -> roundTrip(Io.decode(msg.duplicate()), Io.SIZE, Io::decode);
                default -> roundTrip(Close.decode(msg.duplicate()), Close.SIZE, Close::decode);
            }
        } catch (ProtoException refused) {
            // the only allowed failure
        }
    }

    interface Decoder<T> {
        T decode(ByteBuffer b) throws ProtoException;
    }

    private static <T extends RnbdMsg> void roundTrip(T r, int size, Decoder<T> dec) throws ProtoException {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        r.encode(b);
        assertEquals(r, dec.decode(b.flip()));
    }
}
