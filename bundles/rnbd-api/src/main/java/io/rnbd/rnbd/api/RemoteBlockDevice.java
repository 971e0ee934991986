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

    /**
     * Declare a user of this device (an NBD connection, a load generator): while any claim
     * is held, unmapping without force is refused, like unmapping a block device that is
     * open. The mapping itself belongs to the RNBD client; users never {@link #close()} it.
     */
    default DeviceClaim claim(String user) {
        return () -> {
        };
    }
}
