package org.example.rnbd.backend.simplefile;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;

/**
 * A block backend over one flat file: what nbdkit's example2 plugin is to nbdkit. An export
 * names it with {@code backend = simple-file} and passes its parameters as {@code backend.X}:
 * {@code path} (an absolute file name, required) and {@code size} (bytes; the file is created
 * sparse with it when missing).
 *
 * <p>A backend is a service with the property {@code rnbd.backend}: the name exports choose it by.
 * rnbd-server opens a device per export when the service appears and closes it when the service
 * goes (the bundle stopped, updated or its jar deleted from deploy/): the export then goes
 * offline and its IO waits ({@code offline.wait.ms}); the data is in the file, so nothing is lost.
 */
@Component(service = BlockBackend.class, property = BlockBackend.PROP_TYPE + "=" + SimpleFileBackend.NAME)
public class SimpleFileBackend implements BlockBackend {
    static final String NAME = "simple-file";

    @Override
    public String type() {
        return NAME;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        Path path = path(params);
        long size = size(params);
        Set<StandardOpenOption> options = readOnly ? EnumSet.of(StandardOpenOption.READ)
                : EnumSet.of(StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (!readOnly && size > 0 && !Files.exists(path)) {
            options.add(StandardOpenOption.CREATE_NEW);
            options.add(StandardOpenOption.SPARSE);
        }
        FileChannel file;
        try {
            file = FileChannel.open(path, options);
        } catch (NoSuchFileException e) {
            throw new IOException("simple-file backend: no such file " + path + (size > 0 ? "" : " (give size= to create it)"));
        }
        try {
            if (file.size() < size) {
                file.write(java.nio.ByteBuffer.allocate(1), size - 1); // sparse: only the last byte is written
            }
            return new SimpleFileDevice(file, size > 0 ? size : file.size(), readOnly);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** What open can never take: refused at once, before an export is saved with it. */
    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        path(params);
        size(params);
    }

    private static Path path(Map<String, String> params) throws IOException {
        for (String key : params.keySet()) {
            if (!key.equals("path") && !key.equals("size")) {
                throw new IOException("simple-file backend: unknown parameter '" + key + "' (takes: path, size)");
            }
        }
        String path = params.get("path");
        if (path == null || !path.startsWith("/")) {
            throw new IOException("simple-file backend: parameter 'path' must be an absolute file name");
        }
        return Path.of(path);
    }

    private static long size(Map<String, String> params) throws IOException {
        String text = params.getOrDefault("size", "0").trim();
        try {
            long size = Long.parseLong(text);
            if (size >= 0 && size % 512 == 0) {
                return size;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IOException("simple-file backend: size '" + text + "' is not a multiple of 512 bytes");
    }
}
