package io.rnbd.common;

import java.util.Locale;

/**
 * A byte count as the console, JMX and the admin services' messages print it.
 *
 * @since 1.3
 */
public final class Bytes {
    private Bytes() {
    }

    /** 1536 → "1.5 KiB"; under 1 KiB in bytes ("512 B"). */
    public static String format(long n) {
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
}
