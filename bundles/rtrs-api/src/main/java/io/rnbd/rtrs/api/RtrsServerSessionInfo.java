package io.rnbd.rtrs.api;

import java.util.List;
import java.util.UUID;

/** A server session snapshot: who, over which paths, how much IO. */
public record RtrsServerSessionInfo(String name, String hostId, UUID uuid, int queueDepth, int chunkSize,
                                    List<RtrsServerPathInfo> paths, RtrsIoStats stats) {
    public RtrsServerSessionInfo {
        paths = List.copyOf(paths);
    }
}
