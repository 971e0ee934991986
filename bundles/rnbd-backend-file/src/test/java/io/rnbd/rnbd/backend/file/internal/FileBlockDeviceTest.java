package io.rnbd.rnbd.backend.file.internal;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.testkit.block.BlockDeviceContractTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

class FileBlockDeviceTest extends BlockDeviceContractTest {
    private final FileBackend backend = new FileBackend(3);
    private final AtomicInteger files = new AtomicInteger();
    @TempDir
    Path dir;

    protected Map<String, String> extra() {
        return Map.of();
    }

    @Override
    protected BlockDevice open(long size, boolean readOnly) throws IOException {
        Path file = dir.resolve("disk" + files.incrementAndGet() + ".img");
        java.util.HashMap<String, String> params = new java.util.HashMap<>(extra());
        params.put("path", file.toString());
        if (readOnly) {
            backend.open(Map.of("path", file.toString(), "size", Long.toString(size)), false).close();
        } else {
            params.put("size", Long.toString(size));
        }
        return backend.open(params, readOnly);
    }

    @AfterEach
    void closeBackend() {
        backend.close();
    }
}
