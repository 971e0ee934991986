package io.rnbd.rnbd.backend.file.internal.osgi;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.backend.file.internal.FileBackend;
import java.io.IOException;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Registers the file backend as {@code rnbd.backend=file}; stopping it closes its devices and IO threads. */
@Component(service = BlockBackend.class, immediate = true, configurationPid = FileBackendComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        property = BlockBackend.PROP_TYPE + "=" + FileBackend.TYPE)
@Designate(ocd = FileBackendComponent.Config.class)
public final class FileBackendComponent implements BlockBackend {
    static final String PID = "io.rnbd.rnbd.backend.file";

    @ObjectClassDefinition(id = PID, name = "RNBD file backend",
            description = "Files and block devices as RNBD exports")
    public @interface Config {
        @AttributeDefinition(name = "IO threads",
                description = "Threads doing the positional IO of every file export (1-256)")
        int io_threads() default FileBackend.DEFAULT_IO_THREADS;
    }

    private final FileBackend backend;

    @Activate
    public FileBackendComponent(Config config) {
        this.backend = new FileBackend(config.io_threads());
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
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        backend.validate(params, readOnly);
    }
}
