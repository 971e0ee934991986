package io.rnbd.rnbd.command.loadgen;

import java.time.Duration;
import java.util.Locale;

/** Parsing and printing of sizes (4k, 1m: powers of 1024) and durations (500ms, 10s, 2m, 1h). */
public final class Units {
    private Units() {
    }

    public static long parseSize(String what, String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = 0;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k': shift = 10; break;
                case 'm': shift = 20; break;
                case 'g': shift = 30; break;
                case 't': shift = 40; break;
                default: break;
            }
        }
        if (shift != 0) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s);
            if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
                throw new IllegalArgumentException(what + " " + text + " is out of range");
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " " + text + " is not a size (e.g. 4k, 128k, 1m, 1g)");
        }
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
