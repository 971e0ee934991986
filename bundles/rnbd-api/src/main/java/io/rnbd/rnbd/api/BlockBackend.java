package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.Map;

/**
 * A kind of storage an export can sit on, registered as an OSGi service with the property
 * {@link #PROP_TYPE} ({@code memory}, {@code file}), like an nbdkit plugin. Stopping the
 * backend's bundle takes its exports offline; starting it brings them back.
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
     * Open the storage of an export that several servers serve at once ({@code ha = true}):
     * read-write, as a standby that changes nothing until it takes the storage's lock over
     * ({@link SharedDevice}). The default cannot: EOPNOTSUPP, for storage only one server reaches.
     *
     * @throws IOException with a one-line reason the console can show as is
     * @since 1.8
     */
    default SharedDevice openShared(Map<String, String> params) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "backend '" + type()
                + "' keeps its data on one server: it cannot be exported by several (ha = true)");
    }
}
