package io.rnbd.nbd.gateway.testing;

import io.rnbd.nbd.gateway.internal.ExportLookup;
import io.rnbd.rnbd.api.BlockDevice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/** Exports in a map, for tests. */
public final class MapExports implements ExportLookup {
    public final Map<String, BlockDevice> devices = new ConcurrentSkipListMap<>();

    public MapExports with(String name, BlockDevice dev) {
        devices.put(name, dev);
        return this;
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
        return "test device " + name;
    }
}
