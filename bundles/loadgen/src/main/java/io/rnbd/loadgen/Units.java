package io.rnbd.loadgen;

import io.rnbd.rnbd.api.Sizes;
import java.time.Duration;
import java.util.Locale;

/** Parsing and printing of sizes (4k, 1m: powers of 1024) and durations (500ms, 10s, 2m, 1h). */
public final class Units {
    private Units() {
    }

    public static long parseSize(String what, String text) {
        return Sizes.parse(what + " " + text, text);
    }

    public static Duration parseDuration(String what, String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long unitMillis = 1000;
        if (s.endsWith("ms")) {
            unitMillis = 1;
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            unitMillis = 60_000;
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("h")) {
            unitMillis = 3_600_000;
            s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s);
            if (n < 0 || n > Long.MAX_VALUE / unitMillis) {
                throw new IllegalArgumentException(what + " " + text + " is out of range");
            }
            return Duration.ofMillis(n * unitMillis);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " " + text + " is not a duration (e.g. 500ms, 10s, 2m)");
        }
    }

    /** 4096 → "4k", 1536 → "1536". */
    public static String size(long bytes) {
        String[] suffix = {"", "k", "m", "g", "t"};
        int i = 0;
        while (i < suffix.length - 1 && bytes != 0 && bytes % 1024 == 0) {
            bytes /= 1024;
            i++;
        }
        return bytes + suffix[i];
    }
}
