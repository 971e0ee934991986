package io.rnbd.rtrs.api;

/**
 * A client path snapshot (the kernel's paths/&lt;src@dst&gt;/ sysfs directory).
 *
 * @param name              "src@dst" as given when the path was added
 * @param device            the local RDMA device in use ("" while none)
 * @param reconnectAttempts failed attempts since the path was last connected
 */
public record RtrsClientPathInfo(String name, String srcAddress, String dstAddress, PathState state,
                                 String device, int reconnectAttempts, int lastError, RtrsPathStats stats) {
}
