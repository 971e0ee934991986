package io.rnbd.rnbd.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockIoException;

/**
 * Where an OPEN's device name points, resolved as Linux's rnbd-server does it
 * (rnbd_srv_get_full_path, process_msg_open): the server's search path, with
 * {@code %SESSNAME%} standing for the client's session name, joined to the name with "/",
 * duplicate slashes squeezed. As in Linux, whatever follows {@code %SESSNAME%} in the search
 * path is dropped, and a name containing ".." or too long for a path is refused. An export
 * is found by the path it is published at ({@link ExportConfig#publishedPath()}).
 *
 * <pre>
 *   search path "/"                  + "mem0"      -> "/mem0"
 *   search path "/srv/%SESSNAME%"    + "disk1"     -> "/srv/host-a/disk1"  (session host-a)
 * </pre>
 */
public final class DevSearchPath {
    /** Linux's DEFAULT_DEV_SEARCH_PATH. */
    public static final String DEFAULT = "/";
    static final String SESSNAME = "%SESSNAME%";
    /** PATH_MAX. */
    static final int PATH_MAX = 4096;

    private final String searchPath;

    public DevSearchPath(String searchPath) {
        String p = searchPath == null || searchPath.isBlank() ? DEFAULT : searchPath.trim();
        if (p.length() >= PATH_MAX) {
            throw new IllegalArgumentException("dev.search.path is longer than " + (PATH_MAX - 1) + " bytes");
        }
        this.searchPath = p;
    }

    public String searchPath() {
        return searchPath;
    }

    /** The full path of {@code devName} for session {@code sessName}. */
    public String resolve(String sessName, String devName) throws BlockIoException {
        if (searchPath.length() + devName.length() >= PATH_MAX) {
            throw new BlockIoException(Errno.EINVAL, "device path " + searchPath + "/" + devName + " is too long");
        }
        if (devName.contains("..")) {
            throw new BlockIoException(Errno.EINVAL, "device path " + devName + " contains ..");
        }
        int at = searchPath.indexOf(SESSNAME);
        String full = at >= 0 ? searchPath.substring(0, at) + "/" + sessName + "/" + devName
                : searchPath + "/" + devName;
        if (full.length() >= PATH_MAX) {
            throw new BlockIoException(Errno.EINVAL, "device path " + full + " is too long");
        }
        return squeeze(full);
    }

    /** Duplicate slashes to one, as rnbd_srv_get_full_path does. */
    static String squeeze(String p) {
        StringBuilder b = new StringBuilder(p.length());
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '/' && b.length() > 0 && b.charAt(b.length() - 1) == '/') {
                continue;
            }
            b.append(c);
        }
        return b.toString();
    }
}
