package io.rnbd.rnbd.backend.file.internal;

import java.util.Locale;

/** Parses the {@code size} parameter: a byte count with an optional k/m/g/t suffix (powers of 1024). */
final class Sizes {
    private Sizes() {
    }

    static long parse(String key, String text) {
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
        long n;
        try {
            n = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + text + " is not a size (e.g. 512, 64k, 1m, 1g, 1t)");
        }
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException(key + "=" + text + " is out of range");
        }
        return n << shift;
    }
}
