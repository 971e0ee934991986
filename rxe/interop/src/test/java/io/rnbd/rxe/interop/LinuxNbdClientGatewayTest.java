package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.nbd.gateway.internal.DeviceExports;
import io.rnbd.nbd.gateway.internal.NbdServer;
import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.testkit.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Linux's NBD client (nbd.ko + nbd-client) on the appliance's NBD gateway, with the whole
 * appliance below it over real verbs: the gateway serves an RNBD device that the appliance's
 * RNBD client mapped, over two RTRS paths (rxe0 and rxe1, the DiSNI provider), from the
 * appliance's RNBD server exporting a memory disk. An ext4 file system is made on /dev/nbd0,
 * files are written, the device is detached, the server's memory must hold an ext4 superblock,
 * then it is attached again: {@code e2fsck -fn} clean and every file reads back with its checksum.
 *
 * <p>DiSNI on rxe rather than the soft provider on loopback: this is the appliance as a Linux
 * host would meet it, and DisniRnbdEndToEndTest shows that path is steady in the guest.
 */
class LinuxNbdClientGatewayTest {
    private static final int SIZE = 64 << 20;
    private static final String NBD = "nbd0";
    private static final Path NBD_DEV = Path.of("/dev", NBD);

    @TempDir
    Path tmp;
    private Path mountPoint;

    @BeforeAll
    static void prerequisites() {
        Guest.requireGuest();
        Guest.require(Guest.available("nbd"), "no nbd module in this kernel");
        for (String tool : List.of("/usr/sbin/nbd-client", "/sbin/mkfs.ext4", "/sbin/e2fsck")) {
            Guest.require(Files.isExecutable(Path.of(tool)), tool + " missing on the host (.ci/run installs nbd-client and e2fsprogs)");
        }
    }

    @AfterEach
    void cleanUp() {
        if (mountPoint != null && Guest.run(Guest.timeout(Guest.COMMAND), "mountpoint", "-q", mountPoint.toString()).ok()) {
            Guest.check(Guest.timeout(Duration.ofSeconds(30)), "umount", mountPoint.toString());
        }
        if (Guest.loaded("nbd")) {
            Guest.run(Guest.timeout(Guest.COMMAND), "nbd-client", "-d", NBD_DEV.toString());
        }
    }

    @Test
    void ext4MadeWrittenAndCheckedThroughLinuxNbdClientOnTheGateway() throws Exception {
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), 0)) {
            Guest.step("nbd: appliance up on rxe0+rxe1; export, connect two paths, map");
            a.exportMemory("disk", SIZE);
            ClientSession s = a.connect("interop-nbd", List.of(a.listening(Guest.addr()), a.listening(Guest.addr2())));
            assertEquals(2, s.pathInfo().size());
            RemoteBlockDevice disk = a.map("rnbd0", s, "disk", AccessMode.RW);
            assertEquals(SIZE, disk.size());

            DeviceExports exports = new DeviceExports();
            exports.add(disk.name(), disk);
            try (NbdServer gateway = new NbdServer(
                    NbdServerConfig.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null), exports)) {
                String port = Integer.toString(gateway.tcpAddress().getPort());
                if (!Guest.loaded("nbd")) {
                    Guest.modprobe("nbd", "nbds_max=2");
                }
                Guest.step("nbd-client attach to 127.0.0.1:" + port);
                attach(port, disk.name());
                Guest.step("mkfs.ext4");
                Guest.check(Guest.timeout(Duration.ofSeconds(60)), "mkfs.ext4", "-q", "-F", NBD_DEV.toString());
                mountPoint = Files.createDirectories(tmp.resolve("mnt"));
                mount();
                Guest.step("mounted; write files");
                Map<String, String> written = writeFiles(mountPoint.resolve("data"));
                Guest.step("sync, umount, detach");
                Guest.check(Guest.timeout(Duration.ofSeconds(60)), "sync");
                Guest.check(Guest.timeout(Duration.ofSeconds(60)), "umount", mountPoint.toString());
                detach();

                // the file system reached the appliance's server: an ext4 superblock in its memory
                ByteBuffer sb = ByteBuffer.wrap(a.backend().store("disk")).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(0xEF53, sb.getShort(1024 + 0x38) & 0xffff, "ext4 magic in the server's memory disk");

                // attached again: nothing can come from the client's page cache now
                Guest.step("attach again; e2fsck -fn");
                attach(port, disk.name());
                Guest.check(Guest.timeout(Duration.ofSeconds(120)), "e2fsck", "-f", "-n", NBD_DEV.toString());
                Guest.step("mount; compare checksums");
                mount();
                assertEquals(written, checksums(mountPoint.resolve("data")), "files after detach, fsck and re-mount");
                Guest.check(Guest.timeout(Duration.ofSeconds(60)), "umount", mountPoint.toString());
                detach();
                Guest.step("nbd: done, closing the appliance");
            }
        }
    }

    /** nbd-client -N EXPORT 127.0.0.1 PORT /dev/nbd0 (netlink: the kernel keeps the socket), then its size. */
    private static void attach(String port, String export) {
        Guest.check(Guest.timeout(Duration.ofSeconds(10)), "nbd-client", "-N", export, "-b", "4096", "-t", "600",
                InetAddress.getLoopbackAddress().getHostAddress(), port, NBD_DEV.toString());
        Await.until(NBD_DEV + " has the export's size",
                () -> Guest.blockDeviceSize(NBD) == SIZE, Guest.timeout(Duration.ofSeconds(5)));
    }

    private static void detach() {
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), "nbd-client", "-d", NBD_DEV.toString());
        Await.until(NBD_DEV + " detached", () -> Guest.blockDeviceSize(NBD) == 0, Guest.timeout(Duration.ofSeconds(5)));
    }

    private void mount() {
        Guest.check(Guest.timeout(Duration.ofSeconds(30)), "mount", "-t", "ext4", NBD_DEV.toString(), mountPoint.toString());
    }

    /** A small tree of files of assorted sizes (empty to 3 MiB); their SHA-256 by relative path. */
    private static Map<String, String> writeFiles(Path root) throws IOException {
        Random r = new Random(20261125);
        int[] sizes = {0, 1, 511, 4096, 4097, 65536, 1 << 20, 3 << 20};
        for (int i = 0; i < 24; i++) {
            Path f = root.resolve("d" + (i % 4)).resolve("f" + i);
            Files.createDirectories(f.getParent());
            byte[] b = new byte[sizes[i % sizes.length] + (i >= sizes.length ? r.nextInt(9000) : 0)];
            r.nextBytes(b);
            Files.write(f, b);
        }
        return checksums(root);
    }

    private static Map<String, String> checksums(Path root) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (var files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                try {
                    out.put(root.relativize(f).toString(),
                            HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return out;
    }
}
