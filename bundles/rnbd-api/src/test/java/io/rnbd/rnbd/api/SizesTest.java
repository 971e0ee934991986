package io.rnbd.rnbd.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void suffixesArePowersOf1024() {
        assertEquals(512, Sizes.parse("s", "512"));
        assertEquals(64 << 10, Sizes.parse("s", "64k"));
        assertEquals(1L << 20, Sizes.parse("s", " 1M "));
        assertEquals(1L << 30, Sizes.parse("s", "1gb"));
        assertEquals(2L << 40, Sizes.parse("s", "2t"));
    }

    @Test
    void badInputNamesTheLabelAndNeverOverflows() {
        assertEquals("size=lots is not a size (e.g. 512, 64k, 1m, 1g, 1t)",
                assertThrows(IllegalArgumentException.class, () -> Sizes.parse("size=lots", "lots")).getMessage());
        assertEquals("x is not a size (e.g. 512, 64k, 1m, 1g, 1t)",
                assertThrows(IllegalArgumentException.class, () -> Sizes.parse("x", "k")).getMessage());
        assertEquals("x is out of range", assertThrows(IllegalArgumentException.class, () -> Sizes.parse("x", "-1")).getMessage());
        assertEquals("x is out of range",
                assertThrows(IllegalArgumentException.class, () -> Sizes.parse("x", "99999999999t")).getMessage());
    }

    /** What rnbd:export-add and every backend accept as a device size (issue 20 item 4). */
    @Test
    void aDeviceSizeIsAPositiveMultipleOf512AtMost2To60() {
        assertEquals(512, Sizes.requireDeviceSize("size", 512));
        assertEquals(Sizes.MAX_DEVICE_BYTES, Sizes.requireDeviceSize("size", 1L << 60));
        for (long bad : new long[] {0, -512, 513, 1000, Long.MAX_VALUE}) {
            assertEquals("size " + bad + " must be a positive multiple of 512 bytes", assertThrows(
                    IllegalArgumentException.class, () -> Sizes.requireDeviceSize("size " + bad, bad)).getMessage());
        }
        long over = (1L << 60) + 512;
        assertEquals("s exceeds the largest device size (1 EiB, 2^60 bytes)",
                assertThrows(IllegalArgumentException.class, () -> Sizes.requireDeviceSize("s", over)).getMessage());
    }
}
