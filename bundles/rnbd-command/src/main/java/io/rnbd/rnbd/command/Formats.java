package io.rnbd.rnbd.command;

import io.rnbd.rdma.api.Errno;
import java.util.Locale;

/** How numbers look in tables (JSON keeps raw values). */
final class Formats {
    private Formats() {
    }

    /** "" for no error, else "ENOENT (2)". */
    static String errno(int errno) {
        return errno == 0 ? "" : Errno.name(errno) + " (" + errno + ")";
    }

    /** 1536 → "1.5 KiB". */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    static String lower(Enum<?> e) {
        return e == null ? "" : e.name().toLowerCase(Locale.ROOT);
    }
}
