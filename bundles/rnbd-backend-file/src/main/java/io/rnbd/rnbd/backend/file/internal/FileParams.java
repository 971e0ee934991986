package io.rnbd.rnbd.backend.file.internal;

import io.rnbd.rnbd.api.Sizes;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The parameters of one {@code open}: {@code path}, {@code size}, {@code create}, {@code direct}. */
record FileParams(Path path, long size, boolean create, boolean direct) {
    static final long NO_SIZE = -1;
    private static final Set<String> KEYS = Set.of("path", "size", "create", "direct");

    static FileParams parse(Map<String, String> params) throws IOException {
        for (String key : params.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IOException("file backend: unknown parameter '" + key + "' (takes: path, size, create, direct)");
            }
        }
        String p = params.get("path");
        if (p == null || p.isBlank()) {
            throw new IOException("file backend: parameter 'path' is required (e.g. path=/var/lib/rnbd/disk0.img)");
        }
        Path path;
        try {
            path = Path.of(p.trim());
        } catch (InvalidPathException e) {
            throw new IOException("file backend: path=" + p + " is not a valid path");
        }
        if (!path.isAbsolute()) {
            throw new IOException("file backend: path=" + p + " must be absolute");
        }
        long size = NO_SIZE;
        String s = params.get("size");
        if (s != null && !s.isBlank()) {
            try {
                // a size off the sector would be cut short at open (513 to 512, 100 to nothing): refused
                size = Sizes.requireDeviceSize("size=" + s, Sizes.parse("size=" + s, s));
            } catch (IllegalArgumentException e) {
                throw new IOException("file backend: " + e.getMessage());
            }
        }
        return new FileParams(path, size, flag(params, "create"), flag(params, "direct"));
    }

    private static boolean flag(Map<String, String> params, String key) throws IOException {
        String v = params.getOrDefault(key, "false").trim().toLowerCase(Locale.ROOT);
        switch (v) {
            case "true": case "yes": case "1": return true;
            case "false": case "no": case "0": case "": return false;
            default: throw new IOException("file backend: " + key + "=" + v + " is not true or false");
        }
    }
}
