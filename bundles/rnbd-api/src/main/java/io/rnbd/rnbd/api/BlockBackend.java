package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.Map;

/**
 * A kind of storage an export can sit on, registered as an OSGi service with the property
 * {@link #PROP_TYPE} ({@code memory}, {@code file}, {@code rbd}, or a name of a third-party
 * bundle's own), like an nbdkit plugin. Stopping the backend's bundle takes its exports
 * offline; starting it brings them back, with what they stored (a file, an image, and a
 * memory export's pages alike: storage belongs to the export, not to the bundle).
 */
public interface BlockBackend {
    String PROP_TYPE = "rnbd.backend";

    String type();

    /**
     * Open the storage described by {@code params} (backend specific: {@code size},
     * {@code path}, {@code direct} ...). The device trusts its caller to check each request
     * first ({@link BlockRequests}).
     *
     * @throws IOException with a one-line reason the console can show as is
     */
    BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException;

    /**
     * Check {@code params} without opening anything: throws when no {@link #open} with them
     * can ever succeed (an unknown key, a size that is not a positive multiple of 512 or over
     * the backend's limit, a relative path ...), so that a console refuses such an export
     * instead of saving it. What may still change (a file that does not exist yet, a cluster
     * that does not answer) is not checked. The default checks nothing.
     *
     * @throws IOException with a one-line reason the console can show as is
     * @since 1.6
     */
    default void validate(Map<String, String> params, boolean readOnly) throws IOException {
    }

    /**
     * Open the storage of the export named {@code export}: what rnbd-server calls. A backend
     * whose storage lives nowhere else (memory) keeps it for that export across the device's
     * close and across its own bundle's restart or update, until {@link #release}; a backend
     * over storage that outlives the appliance anyway (a file, an RBD image) needs no name.
     * The default ignores it.
     *
     * @throws IOException with a one-line reason the console can show as is
     * @since 1.8
     */
    default BlockDevice open(String export, Map<String, String> params, boolean readOnly) throws IOException {
        return open(params, readOnly);
    }

    /**
     * The export is gone for good (its configuration was removed): free what this backend
     * kept for it beyond its devices (a memory export's pages), as deleting a file would.
     * Called after its device is closed; never when the export only goes offline or its server
     * stops. The default keeps nothing, so it frees nothing.
     *
     * @since 1.8
     */
    default void release(String export) {
    }
}
