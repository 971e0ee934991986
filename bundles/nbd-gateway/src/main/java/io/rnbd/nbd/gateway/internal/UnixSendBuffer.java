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
 * sockets, so it tells the operator once, when its Unix listener opens.
 */
final class UnixSendBuffer {
    static final Path WMEM_DEFAULT = Path.of("/proc/sys/net/core/wmem_default");
    /** Eight 128 KiB requests in flight, fio's depth in the benchmark, with room to spare. */
    static final long ENOUGH = 1024 * 1024;
    /** What TCP's send buffer may grow to by default ({@code net.ipv4.tcp_wmem}'s maximum). */
    static final long RECOMMENDED = 4L * 1024 * 1024;

    private UnixSendBuffer() {
    }

    /** The log line for a host whose default is short of {@link #ENOUGH}; empty when it is not, or unknown. */
    static Optional<String> hint(Path wmemDefault) {
        OptionalLong bytes = read(wmemDefault);
        if (bytes.isEmpty() || bytes.getAsLong() >= ENOUGH) {
            return Optional.empty();
        }
        return Optional.of("clients on the Unix socket get " + bytes.getAsLong() + "-byte send buffers"
                + " (net.core.wmem_default), so their large writes wait for room: for large local IO set"
                + " net.core.wmem_default = " + RECOMMENDED + " (the README's Host tuning)");
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
