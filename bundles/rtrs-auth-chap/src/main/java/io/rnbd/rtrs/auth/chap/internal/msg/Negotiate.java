package io.rnbd.rtrs.auth.chap.internal.msg;

import io.rnbd.rtrs.api.AuthException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * NEGOTIATE, host → target: who the host claims to be and what it can do.
 * <pre>
 *  0 header (type 0x00)
 *  4 u8  number of hash ids (1..8)
 *  5 u8  number of DH group ids (1..8)
 *  6 u16 host id length (1..255)
 *  8 u8  hash ids[], then u8 DH group ids[], then the host id (UTF-8)
 * </pre>
 * Unknown ids are carried as numbers; the target ignores those it does not know.
 */
public record Negotiate(int tid, List<Integer> hashIds, List<Integer> dhGroupIds, String hostId) implements ChapMessage {
    public static final int FIXED_SIZE = 8;
    static final int MAX_IDS = 8;

    public Negotiate {
        hashIds = List.copyOf(hashIds);
        dhGroupIds = List.copyOf(dhGroupIds);
    }

    @Override
    public int type() {
        return TYPE_NEGOTIATE;
    }

    @Override
    public int size() {
        return FIXED_SIZE + hashIds.size() + dhGroupIds.size() + hostId.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public void encodeBody(ByteBuffer b) {
        byte[] id = hostId.getBytes(StandardCharsets.UTF_8);
        b.put((byte) hashIds.size()).put((byte) dhGroupIds.size()).putShort((short) id.length);
        hashIds.forEach(h -> b.put((byte) (int) h));
        dhGroupIds.forEach(g -> b.put((byte) (int) g));
        b.put(id);
    }

    static Negotiate decodeBody(int tid, ByteBuffer b) throws AuthException {
        Wire.need(b, FIXED_SIZE - HEADER_SIZE, "NEGOTIATE");
        int nh = b.get() & 0xFF;
        int nd = b.get() & 0xFF;
        int idLen = b.getShort() & 0xFFFF;
        if (nh < 1 || nh > MAX_IDS || nd < 1 || nd > MAX_IDS) {
            Wire.bad("NEGOTIATE must list 1.." + MAX_IDS + " hashes and DH groups");
        }
        if (idLen < 1 || idLen > 255) {
            Wire.bad("NEGOTIATE host id length " + idLen + " outside 1..255");
        }
        List<Integer> hashes = new ArrayList<>();
        for (byte h : Wire.bytes(b, nh, "NEGOTIATE hash ids")) {
            hashes.add(h & 0xFF);
        }
        List<Integer> groups = new ArrayList<>();
        for (byte g : Wire.bytes(b, nd, "NEGOTIATE DH group ids")) {
            groups.add(g & 0xFF);
        }
        String hostId = Wire.identity(Wire.bytes(b, idLen, "NEGOTIATE host id"), "NEGOTIATE host id");
        return new Negotiate(tid, hashes, groups, hostId);
    }
}
