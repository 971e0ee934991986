package io.rnbd.rnbd.backend.file.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/** The same contract with O_DIRECT; skipped where the temp filesystem has no O_DIRECT. */
class DirectFileBlockDeviceTest extends FileBlockDeviceTest {
    @Override
    protected Map<String, String> extra() {
        return Map.of("direct", "true");
    }

    @Override
    protected BlockDevice open(long size, boolean readOnly) throws IOException {
        try {
            BlockDevice dev = super.open(size, readOnly);
            assertTrue(dev.logicalBlockSize() >= 512);
            return dev;
        } catch (IOException e) {
            Assumptions.assumeFalse(e.getMessage().contains("O_DIRECT"), e.getMessage());
            throw e;
        }
    }
}
