package io.rnbd.rdma.api;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * An RDMA adapter (or a software one), registered as an OSGi service by its provider with
 * the properties {@link #PROP_NAME} and {@link #PROP_PROVIDER}.
 *
 * <p>Only an {@link IbClient} that the registry handed this device to may use it, and
 * only until the registry calls {@link IbClient#remove}. When the provider takes the
 * device away it first unregisters the service (so every client gets {@code remove} and
 * lets go), then flushes whatever is left: listeners close, queue pairs go to the error
 * state and every outstanding work request completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface RdmaDevice {
    /** Service property: device name, e.g. {@code soft0}, {@code mlx5_0}. */
    String PROP_NAME = "rdma.device";
    /** Service property: provider, e.g. {@code soft}, {@code disni}. */
    String PROP_PROVIDER = "rdma.provider";

    String name();

    String provider();

    /** Stable identity of the adapter (node GUID for hardware). */
    String nodeId();

    LinkState linkState();

    DeviceAttributes attributes();

    /** The IP addresses this device is reachable at (its GIDs' addresses). */
    List<InetAddress> addresses();

    /**
     * The provider's counters, as {@code rdma statistic show} lists a device's: name to value,
     * in a stable order; empty when the provider keeps none. Cheap and never blocking: a
     * console reads it.
     */
    default Map<String, Long> counters() {
        return Map.of();
    }

    /** Allocate a protection domain; memory regions and queue pairs live inside one. */
    ProtectionDomain allocPd() throws RdmaException;

    /**
     * Listen for connection requests on {@code address} (rdma_bind_addr + rdma_listen).
     * The address must be one of {@link #addresses()} or the wildcard; port 0 picks one.
     */
    CmListener listen(InetSocketAddress address, ConnectRequestHandler handler) throws RdmaException;

    /**
     * Start connecting to {@code destination} from this device (rdma_resolve_addr,
     * rdma_resolve_route, rdma_connect). Returns at once; the outcome arrives on
     * {@code events}: {@link CmEvent.Type#ESTABLISHED}, or one of
     * {@link CmEvent.Type#REJECTED}, {@link CmEvent.Type#UNREACHABLE},
     * {@link CmEvent.Type#CONNECT_ERROR}. The queue pair can take RECVs at once, so the
     * first message from the peer always finds one posted.
     *
     * <p>The acceptor's private data arrives with ESTABLISHED, a rejecter's with REJECTED
     * ({@link CmEvent#privateData()}): RTRS carries CON_REQ and CON_RSP there, as Linux does.
     *
     * @param privateData at most {@link CmPrivateData#CONNECT_MAX} bytes for the peer's
     *                    {@link ConnectRequest#privateData()}; every provider carries it
     */
    QueuePair connect(InetSocketAddress destination, QpInit init, byte[] privateData, CmEventHandler events)
            throws RdmaException;
}
