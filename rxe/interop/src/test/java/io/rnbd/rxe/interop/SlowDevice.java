package io.rnbd.rxe.interop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A block device that answers in tens of milliseconds, as disks and network storage do: a
 * dm-delay target over a loop device over a file in the guest's memory. Every read and write
 * waits {@code delayMs} in the device mapper before it reaches the loop device.
 *
 * <pre>
 * truncate -s 64M FILE; losetup --find --show FILE          # /dev/loopN
 * DM_DISABLE_UDEV=1 dmsetup create NAME --table "0 SECTORS delay /dev/loopN 0 MS"
 * </pre>
 */
final class SlowDevice implements AutoCloseable {
    private final String name;
    private final String loop;
    private final Path file;

    private SlowDevice(String name, String loop, Path file) {
        this.name = name;
        this.loop = loop;
        this.file = file;
    }

    static void require() {
        Guest.require(Guest.available("dm-delay") && Guest.available("loop"), "no dm-delay or loop module in this kernel");
    }

    static SlowDevice create(String name, int mib, int delayMs, Path dir) throws Exception {
        Guest.modprobe("loop");
        Guest.modprobe("dm-delay");
        Path file = dir.resolve(name + ".img");
        Guest.check("truncate", "-s", mib + "M", file.toString());
        String loop = Guest.check("losetup", "--find", "--show", file.toString()).trim();
        long sectors = (long) mib * 2048;
        Guest.check(Guest.timeout(Guest.COMMAND), "env", "DM_DISABLE_UDEV=1", "dmsetup", "create", name, "--table",
                "0 " + sectors + " delay " + loop + " 0 " + delayMs);
        SlowDevice d = new SlowDevice(name, loop, file);
        Guest.require(Files.exists(d.path()), d.path() + " did not appear");
        return d;
    }

    /** /dev/mapper/NAME. */
    Path path() {
        return Path.of("/dev/mapper", name);
    }

    /** The device's name under /dev (dm-N), for /sys/block and for Linux's rnbd-server (dev_search_path /dev). */
    String kernelName() {
        return kernelName(name);
    }

    /**
     * The kernel's name (dm-N) of the device-mapper device {@code name}. Not the real path of
     * /dev/mapper/NAME: with udev off (DM_DISABLE_UDEV) dmsetup makes that a node of its own, not
     * a link to /dev/dm-N; devtmpfs makes /dev/dm-N.
     */
    static String kernelName(String name) {
        return Guest.check("dmsetup", "info", "-c", "--noheadings", "-o", "blkdevname", name).trim();
    }

    @Override
    public void close() {
        Guest.run(Guest.timeout(Duration.ofSeconds(30)), "env", "DM_DISABLE_UDEV=1", "dmsetup", "remove", "--retry", name);
        Guest.run(Guest.timeout(Guest.COMMAND), "losetup", "-d", loop);
        Guest.run(Guest.timeout(Guest.COMMAND), "rm", "-f", file.toString());
    }
}
