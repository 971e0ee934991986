package io.rnbd.rtrs.server.internal;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server's rooms, checked over the compiled classes: which class of rtrs-server each
 * class references (its constant pool: the classes it names, in code and in signatures),
 * against what its room may reach. A room reaches another only through that one's narrow
 * interface (a door); the path side reaches its session only through {@link PathSession}, as
 * rtrs-client's paths do. The table is the architecture; docs/architecture.md and the README
 * describe it. A new class must be given a room here, or this fails.
 */
class RoomsTest {
    /** The narrow interfaces between rooms. */
    static final Set<String> DOORS = Set.of("PathSession", "Sessions", "Connection", "UpperLayer");
    /** Plain values every room may hold: settings, the device a path lives on, counters, limits. */
    static final Set<String> VALUES = Set.of("ServerConfig", "DeviceContext", "ServerStats", "SessionLimits");

    static final Map<String, Set<String>> ROOMS = Map.of(
            "acceptor", Set.of("Acceptor"),
            "sessions", Set.of("SessionTable", "ServerSession"),
            "handoff", Set.of("UpperLayerHandoff"),
            "path", Set.of("ServerPath", "ServerPathState", "ServerHandshake", "ServerIo", "ServerCon",
                    "ServerRequest", "Chunks"),
            "assembly", Set.of("RtrsServer"));

    /** Beyond its own classes, the doors and the values: what each room may name. */
    static final Map<String, Set<String>> MAY_REACH = Map.of(
            // the IB client: finds sessions only through the table's door
            "acceptor", Set.of(),
            // a session owns its paths and its chunks: it makes them and holds them (not their
            // insides: a connection it reserves is a Connection, a request it hands on an
            // RtrsServerRequest)
            "sessions", Set.of("ServerPath", "Chunks"),
            // the upper layer's side knows requests and sessions only as rtrs-api has them
            "handoff", Set.of(),
            "path", Set.of(),
            // builds the rooms and is their one face
            "assembly", Set.of("Acceptor", "SessionTable", "ServerSession", "UpperLayerHandoff"));

    /** The implementations behind the doors, which no door may name (a door is narrow). */
    static final Set<String> NEVER_FROM_A_DOOR = Set.of("Acceptor", "SessionTable", "ServerSession",
            "UpperLayerHandoff", "RtrsServer", "ServerIo", "ServerHandshake");

    /** A class of the package itself (not of a package below it, as osgi's). */
    private static final Pattern REF = Pattern.compile("io/rnbd/rtrs/server/internal/([A-Za-z0-9_$]+)(?![A-Za-z0-9_$/])");

    @Test
    void everyClassReachesOnlyItsRoomTheDoorsAndTheValues() throws Exception {
        Map<String, Set<String>> refs = references();
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Set<String>> e : refs.entrySet()) {
            String cls = e.getKey();
            Set<String> allowed = allowed(cls);
            for (String target : e.getValue()) {
                if (!allowed.contains(target)) {
                    wrong.add(cls + " -> " + target);
                }
            }
        }
        assertEquals(List.of(), wrong, "references past the narrow interfaces");
    }

    @Test
    void theOsgiComponentSeesOnlyThePlainJavaFace() throws Exception {
        Set<String> refs = new TreeSet<>();
        for (Map.Entry<String, Set<String>> e : references("osgi").entrySet()) {
            refs.addAll(e.getValue());
        }
        assertEquals(Set.of("RtrsServer", "ServerConfig", "SessionLimits"), refs);
    }

    @Test
    void thePathSideReachesItsSessionOnlyThroughPathSession() throws Exception {
        Map<String, Set<String>> refs = references();
        for (String p : ROOMS.get("path")) {
            assertTrue(refs.containsKey(p), p + " compiled");
            Set<String> r = refs.get(p);
            assertTrue(!r.contains("ServerSession") && !r.contains("SessionTable") && !r.contains("RtrsServer"),
                    p + " names " + r);
        }
        assertTrue(refs.get("ServerPath").contains("PathSession"));
    }

    private static Set<String> allowed(String cls) {
        if (DOORS.contains(cls) || VALUES.contains(cls)) {
            Set<String> all = new TreeSet<>(DOORS);
            all.addAll(VALUES);
            for (Set<String> room : ROOMS.values()) {
                all.addAll(room);
            }
            all.removeAll(NEVER_FROM_A_DOOR);
            if (VALUES.contains(cls)) {
                all.retainAll(union(DOORS, VALUES));
            }
            return all;
        }
        for (Map.Entry<String, Set<String>> room : ROOMS.entrySet()) {
            if (room.getValue().contains(cls)) {
                Set<String> a = new TreeSet<>(room.getValue());
                a.addAll(DOORS);
                a.addAll(VALUES);
                a.addAll(MAY_REACH.get(room.getKey()));
                return a;
            }
        }
        throw new AssertionError(cls + " is in no room: give it one in RoomsTest (and in the README)");
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }

    /** Top-level class of the package (nested classes folded in) → the package's classes it names. */
    static Map<String, Set<String>> references() throws IOException, URISyntaxException {
        return references("");
    }

    private static Map<String, Set<String>> references(String sub) throws IOException, URISyntaxException {
        Path root = Path.of(RtrsServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path dir = root.resolve("io/rnbd/rtrs/server/internal").resolve(sub);
        Map<String, Set<String>> out = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                String name = f.getFileName().toString();
                String top = name.substring(0, name.length() - ".class".length()).split("\\$")[0];
                Set<String> r = out.computeIfAbsent(top, k -> new TreeSet<>());
                try (InputStream in = Files.newInputStream(f)) {
                    for (String s : utf8Constants(in)) {
                        Matcher m = REF.matcher(s);
                        while (m.find()) {
                            String target = m.group(1).split("\\$")[0];
                            if (!target.equals(top)) {
                                r.add(target);
                            }
                        }
                    }
                }
            }
        }
        return out;
    }

    /** The UTF-8 entries of a class file's constant pool: every class, field and method type it names is one. */
    private static List<String> utf8Constants(InputStream raw) throws IOException {
        DataInputStream in = new DataInputStream(raw);
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        List<String> out = new ArrayList<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> out.add(in.readUTF());
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++; // takes two slots
                }
                case 7, 8, 16, 19, 20 -> in.readUnsignedShort();
                case 9, 10, 11, 12, 17, 18 -> in.readInt();
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("constant pool tag " + tag);
            }
        }
        return out;
    }
}
