package io.rnbd.rnbd.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.testkit.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Protocol 2.2's golden bytes from Linux 7.2's own rnbd-proto.h, compiled, not retyped:
 * src/test/c/golden.c includes the header verbatim (src/test/c/linux-7.2, origin and licence in
 * src/test/c/README.md), fills every message as rnbd-clt.c and rnbd-srv.c fill them and runs
 * the header's own rq_to_rnbd_flags and rnbd_to_bio_flags; this test compiles it with gcc,
 * runs it, and holds the codecs against every line it prints. Without gcc it is skipped with
 * that reason (CI has gcc: .ci/run installs it).
 */
class LinuxHeaderGoldenTest {
    private static final Path SRC = Path.of("src/test/c");
    private static String version;
    private static final Map<String, Integer> SIZES = new LinkedHashMap<>();
    private static final Map<String, byte[]> MSGS = new LinkedHashMap<>();
    private static final List<String[]> BIOS = new ArrayList<>();

    @BeforeAll
    static void compileAndRun() throws Exception {
        Assumptions.assumeTrue(ExternalTools.installed("gcc"),
                "gcc is not installed: Linux 7.2's rnbd-proto.h cannot be compiled (apt-get install gcc)");
        Path out = Path.of("target/linux-header-golden");
        Files.createDirectories(out);
        Path exe = out.resolve("golden");
        ExternalTools.Result cc = ExternalTools.run(Duration.ofMinutes(2), "gcc", "-std=gnu11", "-Wall", "-Wextra",
                "-Werror", "-Wno-unused-function", "-I", SRC.resolve("shim").toString(), "-I",
                SRC.resolve("linux-7.2").toString(), "-o", exe.toString(), SRC.resolve("golden.c").toString());
        assertEquals(0, cc.exit(), () -> "gcc failed: " + cc.output());
        ExternalTools.Result run = ExternalTools.run(Duration.ofMinutes(1), exe.toString());
        assertEquals(0, run.exit(), () -> "golden failed: " + run.output());
        for (String line : run.output().split("\n")) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "version" -> version = f[1] + "." + f[2];
                case "size" -> SIZES.put(f[1], Integer.parseInt(f[2]));
                case "msg" -> MSGS.put(f[1], HexFormat.of().parseHex(f[2]));
                case "bio" -> BIOS.add(f);
                default -> throw new IOException("unexpected line from golden: " + line);
            }
        }
    }

    private static byte[] linux(String name) {
        byte[] b = MSGS.get(name);
        assertTrue(b != null, "golden printed no " + name);
        return b;
    }

    private static byte[] encode(RnbdMsg m) {
        ByteBuffer b = m.toBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** Our encoder writes Linux's bytes and our decoder reads them back as {@code m}. */
    private static void same(String name, RnbdMsg m) throws ProtoException {
        byte[] l = linux(name);
        assertArrayEquals(l, encode(m), () -> name + ": ours " + HexFormat.of().formatHex(encode(m)));
        assertEquals(m, RnbdMsg.decode(ByteBuffer.wrap(l)), name);
    }

    @Test
    void theVersionAndTheStructSizesAreTheHeaders() {
        assertEquals(RnbdMsg.VERSION_MAJOR + "." + RnbdMsg.VERSION_MINOR, version);
        assertEquals(Map.of("rnbd_msg_sess_info", MsgType.SESS_INFO.size(),
                "rnbd_msg_sess_info_rsp", MsgType.SESS_INFO_RSP.size(), "rnbd_msg_open", MsgType.OPEN.size(),
                "rnbd_msg_open_rsp", MsgType.OPEN_RSP.size(), "rnbd_msg_io", MsgType.IO.size(),
                "rnbd_msg_close", MsgType.CLOSE.size()), SIZES);
    }

    @Test
    void sessInfoOpenAndCloseAsRnbdCltSendsThem() throws Exception {
        same("sess_info", new SessInfo(2));
        same("sess_info_rsp", new SessInfoRsp(2));
        same("open_rw", new Open(AccessMode.RW, "/dev/ram0"));
        same("open_migration", new Open(AccessMode.MIGRATION, "/dev/ram0"));
        same("open_ro", new Open(AccessMode.RO, "/dev/ram0"));
        same("close", new Close(7));
    }

    /**
     * The OPEN_RSP of a 6.12/7.2 brd disk, which the appliance's client refused ("max sectors
     * out of range"): max_discard_sectors is UINT_MAX, a u32 the decoder read as a negative int.
     */
    @Test
    void anOpenRspOfA612BrdDiskDecodes() throws Exception {
        OpenRsp brd = new OpenRsp(0, 131072, 255, 0, 0xffff_ffffL, 4096, 0, 4096, 512, 128, false, 0);
        same("open_rsp_brd", brd);
        assertEquals(0xffff_ffffL, brd.maxDiscardSectors());
        assertEquals(64L << 20, brd.sizeBytes());
    }

    /** secure_discard is bdev_max_secure_erase_sectors cut to 16 bits: UINT_MAX arrives as 0xffff, a flag. */
    @Test
    void anOpenRspWithWriteCacheFuaZeroesAndSecureErase() throws Exception {
        byte[] l = linux("open_rsp_disk");
        OpenRsp d = OpenRsp.decode(ByteBuffer.wrap(l));
        assertEquals(new OpenRsp(5, 0x123456789aL, 2560, 0x10000, 0x3fffff, 1 << 20, 4096, 4096, 4096, 254, true,
                OpenRsp.CACHE_FUA | OpenRsp.CACHE_WRITEBACK), d);
        assertEquals((byte) 0xff, l[42], "Linux's secure_discard is not 1");
        assertEquals(0, d.unknownCachePolicyBits());
        // the bytes we send differ only in secure_discard's value (1), which Linux reads as a flag
        byte[] ours = encode(d);
        l[42] = 1;
        l[43] = 0;
        assertArrayEquals(l, ours);
    }

    /** Every kind of block request, as rnbd_client_xfer_request sends it through rq_to_rnbd_flags. */
    @Test
    void ioAsRnbdCltSendsItForEveryRequestKind() throws Exception {
        same("io_read", new Io(3, 8, Io.OP_READ | Io.F_SYNC, 4096, 0));
        same("io_write", new Io(3, 16, Io.OP_WRITE, 131072, 0x4003));
        same("io_write_sync_fua", new Io(3, 0x123456789aL, Io.OP_WRITE | Io.F_SYNC | Io.F_FUA, 4096, 0));
        // op_is_sync and op_is_flush: a PREFLUSH write is also SYNC and FUA on the wire
        same("io_write_preflush", new Io(3, 24, Io.OP_WRITE | Io.F_SYNC | Io.F_FUA | Io.F_PREFLUSH, 4096, 0));
        same("io_flush", new Io(3, -1, Io.OP_FLUSH | Io.F_SYNC | Io.F_FUA | Io.F_PREFLUSH, 0, 0));
        same("io_discard", new Io(3, 2048, Io.OP_DISCARD, 1 << 20, 0));
        same("io_secure_erase", new Io(3, 2048, Io.OP_SECURE_ERASE, 1 << 20, 0));
        same("io_write_zeroes", new Io(3, 4096, Io.OP_WRITE_ZEROES, 1 << 21, 0));
        same("io_write_zeroes_nounmap", new Io(3, 4096, Io.OP_WRITE_ZEROES | Io.F_NOUNMAP, 1 << 21, 0));
    }

    /**
     * rnbd_to_bio_flags over every op and flag, and bits it does not know: what Linux's server
     * honours, our decoder reports as such, and what it ignores, ours reports as unknown
     * ({@link Io#unknownFlags}, {@link Io#knownOp}) instead of refusing the message.
     */
    @Test
    void whatLinuxsServerMakesOfEachRwOursReadsAlike() throws Exception {
        assertTrue(BIOS.size() >= 64, "golden printed " + BIOS.size() + " bio lines");
        for (String[] b : BIOS) {
            int rw = Integer.parseUnsignedInt(b[1], 16);
            String linuxOp = b[2];
            Set<String> linuxFlags = b[3].equals("-") ? Set.of() : Set.of(b[3].split(","));
            boolean warned = b[4].equals("1");
            Io io = (Io) RnbdMsg.decode(new Io(3, 8, rw, 512, 0).toBuffer());
            String what = "rw " + b[1];
            assertEquals(rw, io.rw(), what);
            assertEquals(!io.knownOp(), warned, what + ": Linux warns exactly for the ops we do not know");
            if (!io.knownOp()) {
                continue; // Linux runs it as a READ (bio op 0); ours answers EOPNOTSUPP (rnbd-server)
            }
            assertEquals(linuxOp, switch (io.op()) {
                case Io.OP_READ -> "READ";
                case Io.OP_WRITE, Io.OP_FLUSH -> "WRITE"; // RNBD_OP_FLUSH is an empty WRITE with PREFLUSH
                case Io.OP_DISCARD -> "DISCARD";
                case Io.OP_SECURE_ERASE -> "SECURE_ERASE";
                case Io.OP_WRITE_ZEROES -> "WRITE_ZEROES";
                default -> "?";
            }, what);
            Set<String> ours = new TreeSet<>();
            if (io.has(Io.F_SYNC)) {
                ours.add("SYNC");
            }
            if (io.has(Io.F_FUA)) {
                ours.add("FUA");
            }
            if (io.has(Io.F_PREFLUSH) || io.op() == Io.OP_FLUSH) {
                ours.add("PREFLUSH");
            }
            if (io.has(Io.F_NOUNMAP) && io.op() == Io.OP_WRITE_ZEROES) {
                ours.add("NOUNMAP"); // only WRITE_ZEROES carries NOUNMAP into the bio
            }
            assertEquals(new TreeSet<>(linuxFlags), ours, what);
            assertEquals(rw & ~Io.OP_MASK & ~(Io.F_SYNC | Io.F_FUA | Io.F_PREFLUSH | Io.F_NOUNMAP), io.unknownFlags(),
                    what + ": the bits Linux ignores");
        }
        assertFalse(BIOS.stream().noneMatch(b -> b[4].equals("1")), "an unknown op was tried");
    }
}
