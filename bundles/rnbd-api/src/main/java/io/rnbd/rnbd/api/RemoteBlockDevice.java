package io.rnbd.rnbd.api;

/**
 * A device mapped from an RNBD server. The RNBD client registers each mapped device as an
 * OSGi service with the property {@link #PROP_NAME}, so gateways and tools find it.
 */
public interface RemoteBlockDevice extends BlockDevice {
    String PROP_NAME = "rnbd.device";

    /** Local name of the mapping (e.g. {@code rnbd0}). */
    String name();

    /** The export's name on the server. */
    String exportName();

    String sessionName();

    AccessMode accessMode();
}
