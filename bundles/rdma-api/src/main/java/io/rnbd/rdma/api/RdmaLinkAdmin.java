package io.rnbd.rdma.api;

import java.util.List;

/**
 * Creates and deletes a provider's software links ({@code rdma link add/delete}), persisted
 * as configuration. Registered with {@link RdmaDevice#PROP_PROVIDER} by providers that
 * can create devices on demand (soft); hardware providers have none.
 */
public interface RdmaLinkAdmin {
    /** The provider whose links this creates, e.g. {@code soft}. */
    String provider();

    /**
     * Create link {@code name} on local IP {@code address}.
     *
     * @throws RdmaException EINVAL for a malformed name or address, EADDRNOTAVAIL when the
     *                       address is not assignable here, EEXIST when the name is taken
     */
    void addLink(String name, String address) throws RdmaException;

    /**
     * Delete link {@code name}; its device goes away (clients get {@code remove}).
     *
     * @throws RdmaException ENOENT when no such link exists
     */
    void deleteLink(String name) throws RdmaException;

    /** Names of the configured links (whether or not their device is up), sorted. */
    List<String> links() throws RdmaException;
}
