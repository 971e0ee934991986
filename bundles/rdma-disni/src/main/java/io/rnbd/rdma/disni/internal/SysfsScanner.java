package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.LinkState;
import java.io.FileInputStream;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Reads the adapters under a sysfs class directory ({@code /sys/class/infiniband} in
 * production, a fake tree in tests). Never throws: an unreadable entry is skipped.
 *
 * <p>A port's GID table is a file per slot, used or not (1024 on rxe, 256 on mlx5), and
 * the provider scans every poll interval: under emulation one scan of four rxe devices took
 * seconds of CPU, and a host with many virtual functions pays the same on hardware. The
 * kernel fills the table from the addresses of the port's netdevs and their upper devices
 * (VLANs, bonds), so a device's table is read again only when the host's interfaces or
 * addresses, its GUID or its ports' states changed; and read twice after a change, a poll
 * apart, because the kernel updates the table from a work queue after the address moved.
 */
public final class SysfsScanner {
    private final Path root;
    private final Function<String, List<InetAddress>> netdevAddresses;
    private final Supplier<Object> hostInterfaces;
    private final Map<String, Cached> gidTables = new HashMap<>();

    public SysfsScanner(Path root) {
        this(root, SysfsScanner::interfaceAddresses, SysfsScanner::interfaceSummary);
    }

    /** @param netdevAddresses the IP addresses of a network interface by name; GID tables are read every scan */
    public SysfsScanner(Path root, Function<String, List<InetAddress>> netdevAddresses) {
        this(root, netdevAddresses, Object::new);
    }

    /**
     * @param netdevAddresses the IP addresses of a network interface by name
     * @param hostInterfaces  a value equal to the last one until the host's interfaces or their addresses change
     */
    public SysfsScanner(Path root, Function<String, List<InetAddress>> netdevAddresses, Supplier<Object> hostInterfaces) {
        this.root = root;
        this.netdevAddresses = netdevAddresses;
        this.hostInterfaces = hostInterfaces;
    }

    /** What a device's GID tables say: its IPv4-mapped GIDs and the netdevs their entries name. */
    private record GidTables(List<InetAddress> addresses, List<String> netdevs) {
    }

    /** The tables as read under {@code key}; {@code settled} once two reads a poll apart had the same key. */
    private record Cached(List<Object> key, GidTables tables, boolean settled) {
    }

    public Path root() {
        return root;
    }

    /** The adapters present now, by name. Empty when the directory does not exist. */
    public synchronized Map<String, SysfsDevice> scan() {
        Map<String, SysfsDevice> found = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            gidTables.clear();
            return found;
        }
        Object host = hostInterfaces.get();
        try (DirectoryStream<Path> devs = Files.newDirectoryStream(root)) {
            for (Path dev : devs) {
                if (Files.isDirectory(dev)) {
                    String name = dev.getFileName().toString();
                    found.put(name, read(name, dev, host));
                }
            }
        } catch (IOException e) {
            // the directory vanished between the check and the listing: nothing present
        }
        gidTables.keySet().retainAll(found.keySet());
        return found;
    }

    private SysfsDevice read(String name, Path dev, Object host) {
        String guid = readLine(dev.resolve("node_guid"));
        LinkState best = LinkState.DOWN;
        List<Path> ports = list(dev.resolve("ports"));
        List<Object> key = new ArrayList<>(List.of(host, guid));
        for (Path port : ports) {
            String state = readLine(port.resolve("state"));
            key.add(state);
            LinkState s = parseState(state);
            if (s.ordinal() > best.ordinal()) {
                best = s;
            }
        }
        GidTables tables = gidTables(name, ports, key);
        Set<InetAddress> addrs = new LinkedHashSet<>(tables.addresses());
        Set<String> netdevs = new LinkedHashSet<>(tables.netdevs());
        for (Path n : list(dev.resolve("device").resolve("net"))) {
            netdevs.add(n.getFileName().toString());
        }
        for (String n : netdevs) {
            for (InetAddress a : netdevAddresses.apply(n)) {
                if (a instanceof Inet4Address) {
                    addrs.add(a);
                }
            }
        }
        return new SysfsDevice(name, guid, best, new ArrayList<>(addrs));
    }

    /** The device's GID tables: as last read while {@code key} is unchanged and settled, else read now. */
    private GidTables gidTables(String name, List<Path> ports, List<Object> key) {
        Cached last = gidTables.get(name);
        if (last != null && last.settled() && last.key().equals(key)) {
            return last.tables();
        }
        Set<InetAddress> addrs = new LinkedHashSet<>();
        Set<String> netdevs = new LinkedHashSet<>();
        for (Path port : ports) {
            Path gids = port.resolve("gids");
            for (Path ndev : list(port.resolve("gid_attrs").resolve("ndevs"))) {
                String n = readLine(ndev);
                if (n.isEmpty()) {
                    continue; // an unused slot, or an IB GID: no netdev, never IPv4-mapped
                }
                netdevs.add(n);
                InetAddress a = mappedIpv4(readLine(gids.resolve(ndev.getFileName().toString())));
                if (a != null) {
                    addrs.add(a);
                }
            }
        }
        GidTables read = new GidTables(List.copyOf(addrs), List.copyOf(netdevs));
        gidTables.put(name, new Cached(key, read, last != null && last.key().equals(key)));
        return read;
    }

    /** "4: ACTIVE" → ACTIVE; ARMED counts as INIT (not yet usable). */
    static LinkState parseState(String s) {
        String u = s.toUpperCase();
        if (u.contains("ACTIVE")) {
            return LinkState.ACTIVE;
        }
        if (u.contains("INIT") || u.contains("ARMED")) {
            return LinkState.INIT;
        }
        return LinkState.DOWN;
    }

    /** An IPv4-mapped GID (::ffff:a.b.c.d, as RoCE v2 lists its addresses) → a.b.c.d. */
    static InetAddress mappedIpv4(String gid) {
        String hex = gid.replace(":", "");
        if (hex.length() != 32 || !hex.startsWith("00000000000000000000ffff")) {
            return null;
        }
        byte[] b = new byte[4];
        try {
            for (int i = 0; i < 4; i++) {
                b[i] = (byte) Integer.parseInt(hex.substring(24 + 2 * i, 26 + 2 * i), 16);
            }
            return InetAddress.getByAddress(b);
        } catch (NumberFormatException | UnknownHostException e) {
            return null;
        }
    }

    private static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(out::add);
        } catch (IOException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    /**
     * First line, trimmed; "" when missing or unreadable (sysfs answers EINVAL for unused GID
     * slots). One small read: sysfs hands an attribute whole, and a scan reads thousands of
     * them, where a reader's buffers per file were most of the garbage.
     */
    private static String readLine(Path f) {
        byte[] b = new byte[256];
        int n;
        try (FileInputStream in = new FileInputStream(f.toFile())) {
            n = in.read(b);
        } catch (IOException | UnsupportedOperationException e) {
            return "";
        }
        if (n <= 0) {
            return "";
        }
        String s = new String(b, 0, n, StandardCharsets.US_ASCII);
        int nl = s.indexOf('\n');
        return (nl < 0 ? s : s.substring(0, nl)).trim();
    }

    /** The host's interfaces, each with its index and addresses: what the kernel fills GID tables from. */
    static Object interfaceSummary() {
        List<String> all = new ArrayList<>();
        try {
            for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                all.add(ni.getName() + "#" + ni.getIndex() + Collections.list(ni.getInetAddresses()));
            }
        } catch (SocketException e) {
            return new Object(); // unknown: read the tables
        }
        all.sort(null);
        return all;
    }

    private static List<InetAddress> interfaceAddresses(String name) {
        try {
            NetworkInterface ni = NetworkInterface.getByName(name);
            return ni == null ? List.of() : Collections.list(ni.getInetAddresses());
        } catch (SocketException e) {
            return List.of();
        }
    }
}
