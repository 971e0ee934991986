package io.rnbd.command.support;

import io.rnbd.common.Errno;
import java.util.Locale;

/** How numbers look in tables (JSON keeps raw values). */
public final class Formats {
    private Formats() {
    }

    /** "" for no error, else "ECONNREFUSED (111)". */
    public static String errno(int errno) {
        return errno == 0 ? "" : Errno.name(errno) + " (" + errno + ")";
    }

    /** Nanoseconds as microseconds with one decimal; "" when not measured yet. */
    public static String micros(long nanos) {
        return nanos <= 0 ? "" : String.format(Locale.ROOT, "%.1f", nanos / 1000.0);
    }

    /** 1536 → "1.5 KiB". */
    public static String bytes(long n) {
        return io.rnbd.common.Bytes.format(n);
    }

    /** Milliseconds since the epoch as UTC to the second, "2026-11-29T08:01:02Z"; "-" for 0 (unknown). */
    public static String time(long epochMillis) {
        return epochMillis <= 0 ? "-" : java.time.Instant.ofEpochMilli(epochMillis)
                .truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }

    /** An enum as the console spells it: "connected"; "" for none. */
    public static String lower(Enum<?> e) {
        return e == null ? "" : e.name().toLowerCase(Locale.ROOT);
    }
}
