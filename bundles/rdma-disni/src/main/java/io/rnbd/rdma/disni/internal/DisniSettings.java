package io.rnbd.rdma.disni.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Provider tuning.
 *
 * @param cmTimeoutMs       rdma_resolve_addr/rdma_resolve_route timeout
 * @param completionThreads completion threads per device (1-{@value #MAX_COMPLETION_THREADS}), each
 *                          with its own completion channel; a device's queue pairs are spread over
 *                          them, each new one to the thread with the fewest
 * @param memoryWindows     whether always_invalidate's keys are memory windows bound by work
 *                          requests or re-registrations ({@link MemoryWindows})
 */
public record DisniSettings(int cmTimeoutMs, int completionThreads, MemoryWindows memoryWindows) {
    public static final int MAX_COMPLETION_THREADS = 64;
    /** Where the kernel lists RDMA devices. */
    static final Path SYSFS = Path.of("/sys/class/infiniband");

    /**
     * Memory windows for always_invalidate ({@code memory.windows}). A bind is a local operation
     * on a connection's send queue, and rxe (soft-RoCE) runs again whatever follows a request it
     * retries (after an RNR NAK or a timeout), the binds too: a bind that already ran names a key
     * the window no longer has, and the connection stalls (6.1) or fails (7.x); DisniRxeTest shows
     * both. Without a window the key dies in the call that kills it (the registration's remote
     * access switched off, or the registration dropped), and nothing that a retry could run
     * again is on the send queue; where a work request must stand for the kill, it is a
     * zero-length RDMA WRITE, which a retry sends again harmlessly.
     */
    public enum MemoryWindows {
        /**
         * Windows, except on rxe (a device with a {@code parent} netdev attribute in sysfs), where
         * the chunk's remote access is switched off and on in place, as rxe allows from Linux 6.5
         * ({@link MrNative}), and the chunk re-registered where the kernel refuses that.
         */
        AUTO,
        /** Windows on every device. */
        ON,
        /** Re-registration on every device: a new registration of the chunk per request. */
        OFF;

        /** {@code auto}, {@code on} or {@code off}, any case. */
        public static MemoryWindows parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new IllegalArgumentException("memory.windows must be auto, on or off: " + s);
            }
        }
    }

    public DisniSettings {
        if (cmTimeoutMs <= 0) {
            throw new IllegalArgumentException("cm timeout must be positive");
        }
        if (completionThreads < 1 || completionThreads > MAX_COMPLETION_THREADS) {
            throw new IllegalArgumentException(
                    "completion threads must be 1-" + MAX_COMPLETION_THREADS + ": " + completionThreads);
        }
        if (memoryWindows == null) {
            throw new IllegalArgumentException("memory windows: auto, on or off");
        }
    }

    public DisniSettings(int cmTimeoutMs, int completionThreads) {
        this(cmTimeoutMs, completionThreads, MemoryWindows.AUTO);
    }

    /** One completion thread per device. */
    public DisniSettings(int cmTimeoutMs) {
        this(cmTimeoutMs, 1);
    }

    /** Whether the device whose sysfs directory is {@code deviceDir} binds windows. */
    boolean windowsOn(Path deviceDir) {
        return switch (memoryWindows) {
            case ON -> true;
            case OFF -> false;
            case AUTO -> !isRxe(deviceDir);
        };
    }

    /** Whether always_invalidate switches access in place on that device instead of re-registering. */
    boolean accessToggleOn(Path deviceDir) {
        return memoryWindows == MemoryWindows.AUTO && isRxe(deviceDir);
    }

    /** rxe gives its devices a {@code parent} attribute (the netdev under it); hardware has none. */
    static boolean isRxe(Path deviceDir) {
        return Files.exists(deviceDir.resolve("parent"));
    }
}
