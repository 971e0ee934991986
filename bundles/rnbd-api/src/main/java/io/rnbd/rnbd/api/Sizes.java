package io.rnbd.rnbd.api;

import java.util.Locale;

/**
 * Sizes as operators write them in backend parameters and console options: a byte count
 * with an optional k/m/g/t suffix (powers of 1024) and an optional trailing "b".
 */
public final class Sizes {
    /**
     * The largest device size the appliance accepts anywhere: 2^60 bytes (1 EiB). No real
     * device comes near it, and offset + length arithmetic in longs stays far from overflow,
     * so a size over it is a typo (or {@code 9223372036854775807}) that must not be saved.
     *
     * @since 1.6
     */
    public static final long MAX_DEVICE_BYTES = 1L << 60;

    /** The sector of RNBD's wire sizes: every device size is a multiple of it. */
    public static final int SECTOR = 512;

    private Sizes() {
    }

    /**
     * A size a device can have: positive, a multiple of 512 (RNBD sends sizes in sectors, a
     * block device cannot end inside one) and at most {@link #MAX_DEVICE_BYTES}.
     *
     * @throws IllegalArgumentException one line naming {@code label}, fit for a console
     * @since 1.6
     */
    public static long requireDeviceSize(String label, long bytes) {
        if (bytes <= 0 || bytes % SECTOR != 0) {
            throw new IllegalArgumentException(label + " must be a positive multiple of " + SECTOR + " bytes");
        }
        if (bytes > MAX_DEVICE_BYTES) {
            throw new IllegalArgumentException(label + " exceeds the largest device size (1 EiB, 2^60 bytes)");
        }
        return bytes;
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
