package io.rnbd.rtrs.proto;

import io.rnbd.common.Errno;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The descriptor-to-chunk spreading of Linux's process_info_rsp, and its refusals. */
class InfoRspChunksTest {
    private static final int CHUNK = 128 * 1024;

    @Test
    void oneDescriptorPerChunk() throws Exception {
        List<SgDesc> c = new InfoRsp(List.of(new SgDesc(0x1000, 1, CHUNK), new SgDesc(0x900000, 2, CHUNK)))
                .chunks(2, CHUNK);
        assertEquals(List.of(new SgDesc(0x1000, 1, CHUNK), new SgDesc(0x900000, 2, CHUNK)), c);
    }

    @Test
    void oneDescriptorForAllChunksAsLinuxWithoutAlwaysInvalidate() throws Exception {
        List<SgDesc> c = new InfoRsp(List.of(new SgDesc(0x10000, 7, 4 * CHUNK))).chunks(4, CHUNK);
        assertEquals(4, c.size());
        for (int i = 0; i < 4; i++) {
            assertEquals(new SgDesc(0x10000 + (long) i * CHUNK, 7, CHUNK), c.get(i));
        }
    }

    @Test
    void twoRegionsOfTwoChunks() throws Exception {
        List<SgDesc> c = new InfoRsp(List.of(new SgDesc(0, 1, 2 * CHUNK), new SgDesc(1L << 40, 2, 2 * CHUNK)))
                .chunks(4, CHUNK);
        assertEquals(new SgDesc((1L << 40) + CHUNK, 2, CHUNK), c.get(3));
    }

    @Test
    void refusesWhatLinuxRefuses() {
        // sg_cnt does not divide the queue depth
        assertEquals(Errno.EINVAL, assertThrows(ProtoException.class, () -> new InfoRsp(List.of(
                new SgDesc(0, 1, CHUNK), new SgDesc(0, 1, CHUNK), new SgDesc(0, 1, CHUNK))).chunks(4, CHUNK)).errno());
        // a length that is not a multiple of the chunk size
        assertThrows(ProtoException.class, () -> new InfoRsp(List.of(new SgDesc(0, 1, CHUNK + 512))).chunks(1, CHUNK));
        // too little memory for the queue depth
        assertThrows(ProtoException.class, () -> new InfoRsp(List.of(new SgDesc(0, 1, CHUNK))).chunks(2, CHUNK));
        // too much
        assertThrows(ProtoException.class, () -> new InfoRsp(List.of(new SgDesc(0, 1, 4 * CHUNK))).chunks(2, CHUNK));
    }
}
