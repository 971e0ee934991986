package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.LinkState;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SysfsScannerTest {
    @TempDir
    Path root;

    static void write(Path f, String content) throws IOException {
        Files.createDirectories(f.getParent());
        Files.writeString(f, content + "\n");
    }

    /** A RoCE device the way rxe/mlx5 show up: GID 0 link-local, GID 1 IPv4-mapped. */
    static void roce(Path root, String name, String state, String ipv4MappedGid, String ndev) throws IOException {
        Path d = root.resolve(name);
        write(d.resolve("node_guid"), "0200:5eff:fe00:0001");
        write(d.resolve("ports/1/state"), state);
        write(d.resolve("ports/1/gids/0"), "fe80:0000:0000:0000:0200:5eff:fe00:0001");
        write(d.resolve("ports/1/gids/1"), ipv4MappedGid);
        write(d.resolve("ports/1/gids/2"), "0000:0000:0000:0000:0000:0000:0000:0000");
        write(d.resolve("ports/1/gid_attrs/ndevs/0"), ndev);
        write(d.resolve("ports/1/gid_attrs/ndevs/1"), ndev);
    }

    @Test
    void readsNameGuidStateAndIpv4MappedGids() throws Exception {
        roce(root, "rxe0", "4: ACTIVE", "0000:0000:0000:0000:0000:ffff:c000:0201", "dummy0");
        Map<String, SysfsDevice> devs = new SysfsScanner(root, n -> List.of()).scan();
        SysfsDevice d = devs.get("rxe0");
        assertEquals("0200:5eff:fe00:0001", d.nodeGuid());
        assertEquals(LinkState.ACTIVE, d.linkState());
        assertEquals(List.of(InetAddress.getByName("192.0.2.1")), d.addresses());
    }

    @Test
    void addsTheIpv4AddressesOfBoundNetdevsButNoIpv6() throws Exception {
        roce(root, "mlx5_0", "1: DOWN", "fe80:0000:0000:0000:0000:0000:0000:0002", "ib0");
        write(root.resolve("mlx5_0/device/net/ib1/.keep"), "");
        SysfsScanner s = new SysfsScanner(root, n -> {
            try {
                return switch (n) {
                    case "ib0" -> List.of(InetAddress.getByName("10.0.0.5"), InetAddress.getByName("fe80::5"));
                    case "ib1" -> List.of(InetAddress.getByName("10.0.1.5"));
                    default -> List.of();
                };
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        SysfsDevice d = s.scan().get("mlx5_0");
        assertEquals(LinkState.DOWN, d.linkState());
        assertEquals(List.of(InetAddress.getByName("10.0.0.5"), InetAddress.getByName("10.0.1.5")), d.addresses());
    }

    @Test
    void bestPortStateWinsAndArmedIsNotActive() throws Exception {
        Path d = root.resolve("hfi1_0");
        write(d.resolve("ports/1/state"), "3: ARMED");
        write(d.resolve("ports/2/state"), "1: DOWN");
        assertEquals(LinkState.INIT, new SysfsScanner(root, n -> List.of()).scan().get("hfi1_0").linkState());
        write(d.resolve("ports/2/state"), "4: ACTIVE");
        assertEquals(LinkState.ACTIVE, new SysfsScanner(root, n -> List.of()).scan().get("hfi1_0").linkState());
    }

    @Test
    void missingDirectoryOrBrokenEntriesNeverThrow() throws Exception {
        assertTrue(new SysfsScanner(root.resolve("absent"), n -> List.of()).scan().isEmpty());
        Files.createDirectories(root.resolve("bare0"));
        write(root.resolve("stray-file"), "x");
        SysfsDevice d = new SysfsScanner(root, n -> List.of()).scan().get("bare0");
        assertEquals("", d.nodeGuid());
        assertEquals(LinkState.DOWN, d.linkState());
        assertTrue(d.addresses().isEmpty());
        assertEquals(1, new SysfsScanner(root, n -> List.of()).scan().size(), "files are not devices");
    }

    /**
     * Every poll read every GID slot (1024 files per rxe port); now a device's tables are
     * read again only when what they follow from changed, and twice after a change.
     */
    @Test
    void gidTablesAreReadAgainOnlyWhenTheHostsAddressesOrTheDeviceChanged() throws Exception {
        roce(root, "rxe0", "4: ACTIVE", mapped("192.0.2.1"), "dummy0");
        AtomicReference<Object> host = new AtomicReference<>("eth0 [192.0.2.1]");
        SysfsScanner s = new SysfsScanner(root, n -> List.of(), host::get);
        Path gid = root.resolve("rxe0/ports/1/gids/1");
        assertEquals(addresses("192.0.2.1"), s.scan().get("rxe0").addresses());
        write(gid, mapped("192.0.2.2"));
        assertEquals(addresses("192.0.2.2"), s.scan().get("rxe0").addresses(), "the second read after a change reads the table");
        write(gid, mapped("192.0.2.3"));
        assertEquals(addresses("192.0.2.2"), s.scan().get("rxe0").addresses(), "nothing changed: the settled table");

        host.set("eth0 [192.0.2.3]");
        assertEquals(addresses("192.0.2.3"), s.scan().get("rxe0").addresses(), "an address of the host changed");
        s.scan();
        write(gid, mapped("192.0.2.4"));
        write(root.resolve("rxe0/ports/1/state"), "1: DOWN");
        assertEquals(addresses("192.0.2.4"), s.scan().get("rxe0").addresses(), "the port's state changed");
        s.scan();
        write(gid, mapped("192.0.2.5"));
        write(root.resolve("rxe0/node_guid"), "0200:5eff:fe00:0002");
        assertEquals(addresses("192.0.2.5"), s.scan().get("rxe0").addresses(), "another adapter under the same name");

        s.scan();
        try (var tree = Files.walk(root.resolve("rxe0"))) {
            tree.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
        assertTrue(s.scan().isEmpty());
        roce(root, "rxe0", "1: DOWN", mapped("192.0.2.6"), "dummy0"); // the same key as before it went
        write(root.resolve("rxe0/node_guid"), "0200:5eff:fe00:0002");
        assertEquals(addresses("192.0.2.6"), s.scan().get("rxe0").addresses(), "a device that went and came back is read anew");
    }

    private static String mapped(String ipv4) throws IOException {
        byte[] a = InetAddress.getByName(ipv4).getAddress();
        return String.format("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a[0], a[1], a[2], a[3]);
    }

    private static List<InetAddress> addresses(String... ipv4) throws IOException {
        List<InetAddress> out = new java.util.ArrayList<>();
        for (String a : ipv4) {
            out.add(InetAddress.getByName(a));
        }
        return out;
    }

    @Test
    void gidParsing() {
        assertNull(SysfsScanner.mappedIpv4("garbage"));
        assertNull(SysfsScanner.mappedIpv4("fe80:0000:0000:0000:0000:ffff:c000:0201"));
        assertNull(SysfsScanner.mappedIpv4("0000:0000:0000:0000:0000:ffff:zz00:0201"));
        assertEquals("10.1.2.3", SysfsScanner.mappedIpv4("0000:0000:0000:0000:0000:ffff:0a01:0203").getHostAddress());
    }
}
