package io.rnbd.rdma.api;

/**
 * Device limits (the part of ibv_device_attr the transport needs).
 *
 * @param maxMrSize largest memory region in bytes
 * @param maxQpWr   most outstanding work requests per queue (send or receive)
 * @param maxSge    most scatter/gather entries per work request
 * @param maxQp     most queue pairs on the device
 * @param maxMr     most memory regions on the device
 */
public record DeviceAttributes(long maxMrSize, int maxQpWr, int maxSge, int maxQp, int maxMr) {
    public DeviceAttributes {
        if (maxMrSize <= 0 || maxQpWr <= 0 || maxSge <= 0 || maxQp <= 0 || maxMr <= 0) {
            throw new IllegalArgumentException("device limits must be positive");
        }
    }
}
