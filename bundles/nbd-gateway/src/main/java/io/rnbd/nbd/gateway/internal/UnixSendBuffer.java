package io.rnbd.nbd.gateway.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The send buffer a local client's Unix socket gets. The kernel gives every new Unix socket
 * {@code net.core.wmem_default} and never grows it, as it grows TCP's: with the kernel's
 * default, 212992 bytes, less than two 128 KiB requests fit, and a client writing large blocks
 * to the gateway sleeps for room in the middle of each one (with 4 MiB, fio's 128 KiB writes at
 * depth 8 did 16-23 % more IOPS; docs/perf.md §6). The gateway cannot size its clients'
 * sockets, so it tells the operator: one log line when its Unix listener opens, and the dashboard.
 */
final class UnixSendBuffer {
    static final Path WMEM_DEFAULT = Path.of("/proc/sys/net/core/wmem_default");
    /** Eight 128 KiB requests in flight, fio's depth in the benchmark, with room to spare. */
    static final long ENOUGH = 1024 * 1024;
    /** What TCP's send buffer may grow to by default ({@code net.ipv4.tcp_wmem}'s maximum). */
    static final long RECOMMENDED = 4L * 1024 * 1024;

    private UnixSendBuffer() {
    }

    /** The command that fixes it now (for sockets opened afterwards; no restart needed). */
    static final String FIX = "sysctl -w net.core.wmem_default=" + RECOMMENDED;

    /**
     * What the operator should know, in one line with the command that fixes it, for a host whose
     * default is short of {@link #ENOUGH}; empty when it is not, or unknown. The gateway logs it once
     * when its Unix listener opens and shows it (read afresh) in the dashboard's gateway table.
     */
    static Optional<String> hint(Path wmemDefault) {
        OptionalLong bytes = read(wmemDefault);
        if (bytes.isEmpty() || bytes.getAsLong() >= ENOUGH) {
            return Optional.empty();
        }
        return Optional.of("net.core.wmem_default is " + bytes.getAsLong() + " bytes, so clients on the Unix"
                + " socket get send buffers too small for large writes, which wait for room; fix: " + FIX
                + " (keep it in /etc/sysctl.d/90-rnbd.conf; README, Host tuning)");
    }

    /**
     * The number in a sysctl file. In one read: a sysctl reports a size of 0 and answers EOF to a
     * read that does not start at offset 0, so {@code Files.readString}, which reads a byte first
     * to size its buffer, gets "2" of "212992".
     */
    static OptionalLong read(Path sysctl) {
        try (InputStream in = Files.newInputStream(sysctl)) {
            byte[] b = new byte[64];
            int n = in.read(b);
            return n <= 0 ? OptionalLong.empty()
                    : OptionalLong.of(Long.parseLong(new String(b, 0, n, StandardCharsets.US_ASCII).trim()));
        } catch (IOException | NumberFormatException | SecurityException e) {
            return OptionalLong.empty();
        }
    }
}
