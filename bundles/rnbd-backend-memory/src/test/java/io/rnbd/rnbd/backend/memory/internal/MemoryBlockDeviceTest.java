package io.rnbd.rnbd.backend.memory.internal;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.testkit.block.BlockDeviceContractTest;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

class MemoryBlockDeviceTest extends BlockDeviceContractTest {
    private final MemoryBackend backend = new MemoryBackend();

    @Override
    protected BlockDevice open(long size, boolean readOnly) throws IOException {
        return backend.open(Map.of("size", Long.toString(size)), readOnly);
    }

    @AfterEach
    void closeBackend() {
        backend.close();
    }
}
