package io.rnbd.rtrs.auth.chap.api;

import java.io.IOException;
import java.util.List;

/**
 * Manages the CHAP keys of the running authenticator. Changes apply to exchanges that
 * start afterwards; established sessions are not touched.
 *
 * <p>Keys written here go to the keys file ({@code keys.file} of PID
 * {@code io.rnbd.rtrs.auth.chap}), created with owner-only permissions. Keys defined as
 * {@code host.<id>} in the configuration itself are read-only here.
 * No method returns or reports a secret; invalid secrets are rejected with a message that
 * names the problem, never the value.
 */
public interface ChapKeyAdmin {

    /** All host identities with keys, sorted by host id. */
    List<ChapKeyInfo> list();

    /**
     * Adds or replaces the keys of {@code hostId}.
     *
     * @param hostSecret the host's DHHC-1 secret
     * @param ctrlSecret the controller's DHHC-1 secret for bidirectional auth, or null for none
     * @throws IllegalArgumentException a bad host id or secret format
     * @throws IllegalStateException    no keys file is configured
     * @throws IOException              the keys file could not be written
     */
    void put(String hostId, String hostSecret, String ctrlSecret) throws IOException;

    /**
     * Removes the keys of {@code hostId} from the keys file.
     *
     * @return false if the keys file has no entry for {@code hostId}
     * @throws IllegalStateException the keys come from the configuration, or no keys file is configured
     * @throws IOException           the keys file could not be written
     */
    boolean remove(String hostId) throws IOException;
}
