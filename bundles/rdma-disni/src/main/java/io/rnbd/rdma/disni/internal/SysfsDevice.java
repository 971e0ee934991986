package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.LinkState;
import java.net.InetAddress;
import java.util.List;

/**
 * One adapter as /sys/class/infiniband describes it.
 *
 * @param name      ib device name, e.g. {@code mlx5_0}, {@code rxe0}
 * @param nodeGuid  node GUID as the kernel prints it
 * @param linkState best state over the device's ports
 * @param addresses IPv4 addresses it is reachable at (IPv4-mapped GIDs first, then the
 *                  addresses of the netdevs bound to its GIDs); DiSNI speaks IPv4 only
 */
public record SysfsDevice(String name, String nodeGuid, LinkState linkState, List<InetAddress> addresses) {
    public SysfsDevice {
        addresses = List.copyOf(addresses);
    }
}
