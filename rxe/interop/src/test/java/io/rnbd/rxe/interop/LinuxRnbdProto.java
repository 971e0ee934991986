package io.rnbd.rxe.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the running kernel's RNBD speaks, read from the {@code rnbd-proto.h} its modules were
 * built from (rxe/lib/build-linux-rtrs.sh installs it beside them): the expectations of the
 * interop tests follow the kernel under test instead of assuming one. Seen in Debian's sources:
 *
 * <ul>
 *   <li>6.1: protocol 2.0, op 5 is WRITE_SAME (never sent; the server answers
 *       max_write_same_sectors 0), flags SYNC and FUA only: a zero-out is written as WRITEs of
 *       zeros by the block layer, a punched hole is EOPNOTSUPP;</li>
 *   <li>6.12: protocol 2.0 still, op 5 is WRITE_ZEROES (sized by OPEN_RSP's
 *       max_write_zeroes_sectors), flags SYNC and FUA only;</li>
 *   <li>7.x: protocol 2.2, RNBD_F_PREFLUSH (2.1) and RNBD_F_NOUNMAP (2.2).</li>
 * </ul>
 *
 * {@link #expectedFor} is that list as code; {@code LinuxClientOpsTest} checks it against the
 * header of the kernel it runs on, so a kernel that moves shows up as a failure, not as a
 * silently different expectation.
 */
public record LinuxRnbdProto(int major, int minor, boolean writeZeroes, boolean preflush, boolean nounmap) {
    public static Path header() {
        return Path.of("/lib/modules", System.getProperty("os.version"), "updates/linux-rtrs/rnbd-proto.h");
    }

    /** The running kernel's, from its modules' header. */
    public static LinuxRnbdProto running() {
        String h;
        try {
            h = Files.readString(header());
        } catch (IOException e) {
            throw new UncheckedIOException("no " + header() + ": rxe/lib/build-linux-rtrs.sh installs it with the modules", e);
        }
        return new LinuxRnbdProto(define(h, "RNBD_PROTO_VER_MAJOR"), define(h, "RNBD_PROTO_VER_MINOR"),
                Pattern.compile("RNBD_OP_WRITE_ZEROES\\s*=\\s*5").matcher(h).find(),
                Pattern.compile("RNBD_F_PREFLUSH\\s*=").matcher(h).find(),
                Pattern.compile("RNBD_F_NOUNMAP\\s*=").matcher(h).find());
    }

    private static int define(String h, String name) {
        Matcher m = Pattern.compile("#define\\s+" + name + "\\s+(\\d+)").matcher(h);
        if (!m.find()) {
            throw new AssertionError(header() + " has no " + name);
        }
        return Integer.parseInt(m.group(1));
    }

    /** What Debian's kernel of this release speaks, as seen in its sources (the list above). */
    public static LinuxRnbdProto expectedFor(String release) {
        String[] v = release.split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        if (major == 6 && minor == 1) {
            return new LinuxRnbdProto(2, 0, false, false, false);
        }
        if (major == 6 && minor == 12) {
            return new LinuxRnbdProto(2, 0, true, false, false);
        }
        if (major >= 7) {
            return new LinuxRnbdProto(2, 2, true, true, true);
        }
        throw new AssertionError("no expectation written for Linux " + release + " yet: read its rnbd-proto.h and add it");
    }

    public static String release() {
        return System.getProperty("os.version");
    }
}
