package io.rnbd.nbd.gateway.internal;

import io.rnbd.rnbd.api.BlockDevice;
import java.util.Collection;

/** Where the server finds its exports: one block device per name. */
public interface ExportLookup {
    /** The device exported as {@code name}, or null. */
    BlockDevice find(String name);

    /** Names of all exports, for NBD_OPT_LIST. */
    Collection<String> names();

    /** A line for humans in NBD_OPT_LIST and NBD_INFO_DESCRIPTION. */
    default String describe(String name) {
        return "";
    }
}
