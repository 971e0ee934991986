package io.rnbd.rnbd.api;

import java.util.Locale;

/**
 * Sizes as operators write them in backend parameters and console options: a byte count
 * with an optional k/m/g/t suffix (powers of 1024) and an optional trailing "b".
 */
public final class Sizes {
    private Sizes() {
    }

    /**
     * @param label how the value is named in the error, e.g. {@code "size=1x"}
     * @throws IllegalArgumentException "{@code label} is not a size (e.g. ...)" or
     *                                  "{@code label} is out of range", fit for a console
     */
    public static long parse(String label, String text) {
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
            throw new IllegalArgumentException(label + " is not a size (e.g. 512, 64k, 1m, 1g, 1t)");
        }
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException(label + " is out of range");
        }
        return n << shift;
    }
}
