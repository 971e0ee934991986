package io.rnbd.rtrs.api;

import java.util.UUID;

/** One path of a server session, as the admin interface shows it. */
public record RtrsServerPathInfo(UUID uuid, String device, String localAddress, String remoteAddress,
                                 int connections, int inflight) {
}
