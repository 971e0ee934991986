package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.rnbd.api.Sizes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * The parameters of one {@code open} (the export's {@code backend.X} keys over the backend's
 * {@link RbdSettings}): {@code image} (required), {@code pool}, {@code conf}, {@code id},
 * {@code keyring}, {@code create.size}, {@code op.timeout.sec}, {@code connect.timeout.sec}.
 */
record RbdParams(String pool, String image, String conf, String id, String keyring, long createSize,
                 int opTimeoutSec, int connectTimeoutSec) {
    static final long NO_CREATE = 0;
    static final Set<String> KEYS = Set.of("pool", "image", "conf", "id", "keyring", "create.size", "op.timeout.sec",
            "connect.timeout.sec");
    private static final String TAKES = "pool, image, conf, id, keyring, create.size, op.timeout.sec, "
            + "connect.timeout.sec";
    private static final int SECTOR = 512;

    /** "pool/image", as Ceph's tools name it. */
    String spec() {
        return pool + "/" + image;
    }

    static RbdParams parse(Map<String, String> params, RbdSettings defaults) throws IOException {
        for (String key : params.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IOException("rbd backend: unknown parameter '" + key + "' (takes: " + TAKES + ")");
            }
        }
        String image = value(params, "image", "");
        if (image.isEmpty()) {
            throw new IOException("rbd backend: parameter 'image' is required (e.g. image=disk0, in pool "
                    + (defaults.pool().isEmpty() ? "rbd" : defaults.pool()) + " unless pool= is given)");
        }
        String pool = value(params, "pool", defaults.pool());
        if (pool.isEmpty()) {
            throw new IOException("rbd backend: parameter 'pool' is empty");
        }
        checkName("pool", pool);
        checkName("image", image);
        String conf = value(params, "conf", defaults.conf());
        String keyring = value(params, "keyring", defaults.keyring());
        checkReadable("conf", conf);
        checkReadable("keyring", keyring);
        String id = cephxId(value(params, "id", defaults.id()));
        if (id.isEmpty()) {
            throw new IOException("rbd backend: parameter 'id' is empty (a cephx user such as admin)");
        }
        long create = NO_CREATE;
        String s = params.get("create.size");
        if (s != null && !s.isBlank()) {
            try {
                create = Sizes.parse("create.size=" + s.trim(), s);
            } catch (IllegalArgumentException e) {
                throw new IOException("rbd backend: " + e.getMessage());
            }
            if (create <= 0 || create % SECTOR != 0) {
                throw new IOException("rbd backend: create.size=" + s.trim() + " must be a positive multiple of "
                        + SECTOR + " bytes");
            }
            if (create > Sizes.MAX_DEVICE_BYTES) {
                // rbd create would take it (images go to 2^64), but no client could address it
                throw new IOException("rbd backend: create.size=" + s.trim() + " exceeds the largest device size "
                        + "(1 EiB, 2^60 bytes)");
            }
        }
        int op = seconds(params, "op.timeout.sec", defaults.opTimeoutSec(), 0);
        int connect = seconds(params, "connect.timeout.sec", defaults.connectTimeoutSec(), 1);
        return new RbdParams(pool, image, conf, id, keyring, create, op, connect);
    }

    /** "client.admin" and "admin" both mean the cephx user admin. */
    static String cephxId(String id) {
        return id.startsWith("client.") ? id.substring("client.".length()) : id;
    }

    private static String value(Map<String, String> params, String key, String dflt) {
        String v = params.get(key);
        return v == null || v.isBlank() ? dflt : v.trim();
    }

    /* '/' and '@' separate pool, image and snapshot in every Ceph tool: a name with one is a mistake. */
    private static void checkName(String key, String name) throws IOException {
        if (name.indexOf('/') >= 0 || name.indexOf('@') >= 0 || name.indexOf('\0') >= 0) {
            throw new IOException("rbd backend: " + key + "=" + name + " must not contain '/' or '@' (give pool= and "
                    + "image= apart; snapshots are not exported)");
        }
    }

    /* librados would only say ENOENT; the operator needs the path. */
    private static void checkReadable(String key, String path) throws IOException {
        if (path.isEmpty()) {
            return;
        }
        try {
            if (!Files.isReadable(Path.of(path))) {
                throw new IOException("rbd backend: " + key + "=" + path + " is not a readable file");
            }
        } catch (InvalidPathException e) {
            throw new IOException("rbd backend: " + key + "=" + path + " is not a valid path");
        }
    }

    private static int seconds(Map<String, String> params, String key, int dflt, int min) throws IOException {
        String v = params.get(key);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= min && n <= RbdSettings.MAX_TIMEOUT_SEC) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException("rbd backend: " + key + "=" + v.trim() + " must be a whole number of seconds from "
                + min + " to " + RbdSettings.MAX_TIMEOUT_SEC);
    }
}
