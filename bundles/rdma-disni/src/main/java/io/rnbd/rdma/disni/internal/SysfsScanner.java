package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.LinkState;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Reads the adapters under a sysfs class directory ({@code /sys/class/infiniband} in
 * production, a fake tree in tests). Never throws: an unreadable entry is skipped.
 */
public final class SysfsScanner {
    private final Path root;
    private final Function<String, List<InetAddress>> netdevAddresses;

    public SysfsScanner(Path root) {
        this(root, SysfsScanner::interfaceAddresses);
    }

    /** @param netdevAddresses the IP addresses of a network interface by name */
    public SysfsScanner(Path root, Function<String, List<InetAddress>> netdevAddresses) {
        this.root = root;
        this.netdevAddresses = netdevAddresses;
    }

    public Path root() {
        return root;
    }

    /** The adapters present now, by name. Empty when the directory does not exist. */
    public Map<String, SysfsDevice> scan() {
        Map<String, SysfsDevice> found = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            return found;
        }
        try (DirectoryStream<Path> devs = Files.newDirectoryStream(root)) {
            for (Path dev : devs) {
                if (Files.isDirectory(dev)) {
                    String name = dev.getFileName().toString();
                    found.put(name, read(name, dev));
                }
            }
        } catch (IOException e) {
            // the directory vanished between the check and the listing: nothing present
        }
        return found;
    }

    private SysfsDevice read(String name, Path dev) {
        String guid = readLine(dev.resolve("node_guid"));
        LinkState best = LinkState.DOWN;
        Set<InetAddress> addrs = new LinkedHashSet<>();
        Set<String> netdevs = new LinkedHashSet<>();
        for (Path port : list(dev.resolve("ports"))) {
            LinkState s = parseState(readLine(port.resolve("state")));
            if (s.ordinal() > best.ordinal()) {
                best = s;
            }
            for (Path gid : list(port.resolve("gids"))) {
                InetAddress a = mappedIpv4(readLine(gid));
                if (a != null) {
                    addrs.add(a);
                }
            }
            for (Path ndev : list(port.resolve("gid_attrs").resolve("ndevs"))) {
                String n = readLine(ndev);
                if (!n.isEmpty()) {
                    netdevs.add(n);
                }
            }
        }
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

    /** First line, trimmed; "" when missing or unreadable (sysfs answers EINVAL for unused GID slots). */
    private static String readLine(Path f) {
        try {
            List<String> lines = Files.readAllLines(f, StandardCharsets.US_ASCII);
            return lines.isEmpty() ? "" : lines.get(0).trim();
        } catch (IOException e) {
            return "";
        }
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
