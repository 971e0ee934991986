package io.rnbd.rxe.interop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a block device of the guest was asked to do, from the kernel's block_rq_issue
 * tracepoint (tracefs), one line per request: the server side's view of the ops and flags a
 * client's requests became. Each line's rwbs field spells the request: a leading F is a flush
 * (REQ_PREFLUSH or a flush request), then the op (W write, R read, D discard, N other), then F
 * for FUA and S for sync. Write-zeroes is N on 6.1 and 6.12 and WZ after the blktrace rework
 * of 2025 (7.3 in CI run 39 printed WZ): {@link #writesData} tells a data write from it.
 */
final class BlockTrace implements AutoCloseable {
    private static final Path T = Path.of("/sys/kernel/tracing");
    private final Path event = T.resolve("events/block/block_rq_issue");

    private BlockTrace() {
    }

    /** Starts tracing the requests issued to the block device NAME (/sys/block/NAME). */
    static BlockTrace of(String name) {
        Guest.sh(Guest.timeout(Guest.COMMAND), "mountpoint -q " + T + " || mount -t tracefs nodev " + T);
        String[] mm = Guest.readSysfs(Path.of("/sys/block", name, "dev")).split(":");
        long dev = (Long.parseLong(mm[0]) << 20) | Long.parseLong(mm[1]);
        BlockTrace t = new BlockTrace();
        Guest.writeSysfs(T.resolve("tracing_on"), "0");
        Guest.writeSysfs(t.event.resolve("enable"), "0");
        Guest.sh(Guest.timeout(Guest.COMMAND), ": > " + T.resolve("trace"));
        Guest.writeSysfs(t.event.resolve("filter"), "dev == " + dev);
        Guest.writeSysfs(t.event.resolve("enable"), "1");
        Guest.writeSysfs(T.resolve("tracing_on"), "1");
        return t;
    }

    /** Whether an rwbs field is a write carrying data: W, not write-zeroes' WZ (nor N). */
    static boolean writesData(String rwbs) {
        String op = rwbs.startsWith("F") ? rwbs.substring(1) : rwbs;
        return op.startsWith("W") && !op.startsWith("WZ");
    }

    /** The rwbs field of every request traced so far. */
    List<String> rwbs() {
        try {
            return Files.readAllLines(T.resolve("trace")).stream().filter(l -> l.contains("block_rq_issue:"))
                    .map(l -> l.substring(l.indexOf("block_rq_issue:") + 15).trim().split("\\s+"))
                    .filter(f -> f.length > 1).map(f -> f[1]).toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        Guest.writeSysfs(event.resolve("enable"), "0");
        Guest.writeSysfs(event.resolve("filter"), "0");
    }
}
