package io.rnbd.rtrs.client.internal;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** A path as configured: {@code [src@]dst[:port]}; {@code src} null means any local device. */
public record PathAddress(InetAddress src, InetAddress dst, int port) {
    public static PathAddress parse(String spec, int defaultPort) {
        String s = spec.trim();
        InetAddress src = null;
        int at = s.indexOf('@');
        try {
            if (at >= 0) {
                src = InetAddress.getByName(s.substring(0, at));
                s = s.substring(at + 1);
            }
            int port = defaultPort;
            int colon = s.lastIndexOf(':');
            if (colon > 0 && s.indexOf(':') == colon) {
                port = Integer.parseInt(s.substring(colon + 1));
                s = s.substring(0, colon);
            }
            if (s.isEmpty() || port < 1 || port > 65535) {
                throw new IllegalArgumentException("path must be [src@]dst[:port]: " + spec);
            }
            return new PathAddress(src, InetAddress.getByName(s), port);
        } catch (UnknownHostException | NumberFormatException e) {
            throw new IllegalArgumentException("path must be [src@]dst[:port]: " + spec);
        }
    }

    public InetSocketAddress destination() {
        return new InetSocketAddress(dst, port);
    }

    /** "src@dst" as the kernel names path directories. */
    public String name() {
        return (src == null ? "*" : src.getHostAddress()) + "@" + dst.getHostAddress() + ":" + port;
    }
}
