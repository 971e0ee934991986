package io.rnbd.nbd.proto;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;

/**
 * The NBD decoders a server runs on what a hostile client sends (client flags, option
 * header, NBD_OPT_GO, request): the first byte picks the decoder, the rest is the record.
 * Only an {@link NbdProtoException} may refuse it.
 */
class NbdProtoFuzzTest {

    @FuzzTest
    void records(byte[] data) {
        if (data.length == 0) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(data, 1, data.length - 1).slice();
        try {
            switch (Math.floorMod(data[0], 4)) {
                case 0 -> ClientFlags.decode(b);
                case 1 -> OptionHeader.decode(b);
                case 2 -> GoRequest.decode(b);
                default -> Request.decode(b);
            }
        } catch (NbdProtoException refused) {
            // the only allowed failure
        }
    }
}
