package io.rnbd.rdma.disni.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns DiSNI's IOExceptions into RdmaExceptions with the errno our libdisni reports. */
final class Errors {
    private static final Pattern ERRNO = Pattern.compile("\\(errno (\\d+)\\)");

    private Errors() {
    }

    static RdmaException of(String what, IOException e) {
        return new RdmaException(errno(e, Errno.EIO), what + ": " + e.getMessage(), e);
    }

    static int errno(IOException e, int fallback) {
        Matcher m = ERRNO.matcher(String.valueOf(e.getMessage()));
        return m.find() ? Integer.parseInt(m.group(1)) : fallback;
    }
}
