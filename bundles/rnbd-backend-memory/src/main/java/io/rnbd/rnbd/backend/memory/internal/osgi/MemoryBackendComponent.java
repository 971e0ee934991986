package io.rnbd.rnbd.backend.memory.internal.osgi;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.backend.memory.internal.MemoryBackend;
import java.io.IOException;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Registers the memory backend as {@code rnbd.backend=memory}, over the stores the framework
 * keeps ({@link StoreHolder}); stopping it closes its devices and keeps their stores.
 */
@Component(service = BlockBackend.class, immediate = true,
        property = BlockBackend.PROP_TYPE + "=" + MemoryBackend.TYPE)
public final class MemoryBackendComponent implements BlockBackend {
    private final MemoryBackend backend;

    @Activate
    public MemoryBackendComponent(BundleContext context) {
        this.backend = new MemoryBackend(StoreHolder.stores(context));
    }

    @Deactivate
    void deactivate() {
        backend.close();
    }

    @Override
    public String type() {
        return backend.type();
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        return backend.open(params, readOnly);
    }

    @Override
    public BlockDevice open(String export, Map<String, String> params, boolean readOnly) throws IOException {
        return backend.open(export, params, readOnly);
    }

    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        backend.validate(params, readOnly);
    }

    @Override
    public void release(String export) {
        backend.release(export);
    }
}
