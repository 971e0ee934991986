package io.rnbd.rtrs.auth.chap.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The CHAP keys file: one {@code host.<id>=<secret>} or {@code ctrl.<id>=<secret>} per line,
 * {@code #} comments. Split at the first '=' (host ids cannot contain one; base64 padding can).
 * A file that group or others may access is refused, as ssh does with private keys.
 * Rewrites go through an owner-only temporary file and an atomic rename.
 */
public final class KeyFile {
    private static final Set<PosixFilePermission> FOREIGN = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
    private static final String OWNER_ONLY = "rw-------";

    private final Path path;

    public KeyFile(Path path) {
        this.path = path;
    }

    public Path path() {
        return path;
    }

    /** @return the keys in the file; empty if it does not exist */
    public synchronized Map<String, HostKeys> load() throws IOException, ChapKeyException {
        return KeyEntries.parse(readEntries(), path.toString());
    }

    /** Adds or replaces one host's keys and rewrites the file. */
    public synchronized void put(String hostId, HostKeys keys) throws IOException, ChapKeyException {
        Map<String, String> entries = new TreeMap<>(readEntries());
        entries.remove(KeyEntries.CTRL_PREFIX + hostId);
        entries.put(KeyEntries.HOST_PREFIX + hostId, keys.hostKey().encoded());
        if (keys.ctrlKey() != null) {
            entries.put(KeyEntries.CTRL_PREFIX + hostId, keys.ctrlKey().encoded());
        }
        write(entries);
    }

    /** @return false if the file has no keys for {@code hostId} */
    public synchronized boolean remove(String hostId) throws IOException, ChapKeyException {
        Map<String, String> entries = new TreeMap<>(readEntries());
        boolean had = entries.remove(KeyEntries.HOST_PREFIX + hostId) != null;
        had |= entries.remove(KeyEntries.CTRL_PREFIX + hostId) != null;
        if (had) {
            write(entries);
        }
        return had;
    }

    private Map<String, String> readEntries() throws IOException, ChapKeyException {
        List<String> lines;
        try {
            checkPermissions();
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Map.of();
        }
        Map<String, String> entries = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            String name = eq < 0 ? "" : line.substring(0, eq).trim();
            // never quote the line: it may hold a secret
            if (!KeyEntries.isKeyEntry(name)) {
                throw new ChapKeyException(path + " line " + (i + 1) + ": expected host.<id>=<secret> or ctrl.<id>=<secret>");
            }
            if (entries.put(name, line.substring(eq + 1).trim()) != null) {
                throw new ChapKeyException(path + " line " + (i + 1) + ": duplicate " + name);
            }
        }
        return entries;
    }

    private void checkPermissions() throws IOException, ChapKeyException {
        PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
        if (view == null) {
            return; // not a POSIX file system: nothing to check
        }
        Set<PosixFilePermission> perms = view.readAttributes().permissions();
        if (perms.stream().anyMatch(FOREIGN::contains)) {
            throw new ChapKeyException("refusing to load CHAP keys from " + path + ": permissions "
                    + PosixFilePermissions.toString(perms) + " give group/others access; run chmod 600 " + path);
        }
    }

    private void write(Map<String, String> entries) throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.getFileAttributeView(dir, PosixFileAttributeView.class) != null
                ? Files.createTempFile(dir, ".chap-keys", ".tmp",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY)))
                : Files.createTempFile(dir, ".chap-keys", ".tmp");
        try {
            StringBuilder sb = new StringBuilder("# RTRS CHAP keys (DHHC-1). Keep this file mode 600.\n");
            entries.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
            Files.writeString(tmp, sb, StandardCharsets.UTF_8);
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    @Override
    public String toString() {
        return "KeyFile[" + path + "]";
    }
}
