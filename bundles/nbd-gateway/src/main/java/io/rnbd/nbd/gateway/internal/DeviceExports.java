package io.rnbd.nbd.gateway.internal;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.concurrent.ConcurrentSkipListMap;

/** The mapped devices as exports, one per device, named after it; the first of two same names wins. */
public final class DeviceExports implements ExportLookup {
    private final ConcurrentSkipListMap<String, BlockDevice> devices = new ConcurrentSkipListMap<>();

    /** False if another device already has the name. */
    public boolean add(String name, BlockDevice device) {
        return devices.putIfAbsent(name, device) == null;
    }

    /** False if {@code device} was not the export {@code name}. */
    public boolean remove(String name, BlockDevice device) {
        return devices.remove(name, device);
    }

    @Override
    public BlockDevice find(String name) {
        return devices.get(name);
    }

    @Override
    public Collection<String> names() {
        return new ArrayList<>(devices.keySet());
    }

    @Override
    public String describe(String name) {
        BlockDevice d = devices.get(name);
        if (d instanceof RemoteBlockDevice r) {
            return "RNBD device " + r.name() + ": export " + r.exportName() + " of session " + r.sessionName()
                    + " (" + r.accessMode() + ")";
        }
        return d == null ? "" : "block device " + name;
    }
}
