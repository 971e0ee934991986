package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.disni.internal.DisniSettings.MemoryWindows;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** memory.windows: what it parses and what auto resolves to, on canned sysfs directories. */
class DisniSettingsTest {
    @TempDir
    Path sysfs;

    /** rxe's device directory: its {@code parent} attribute names the netdev under it. */
    private Path rxe() throws Exception {
        Path d = Files.createDirectories(sysfs.resolve("rxe0"));
        Files.writeString(d.resolve("parent"), "dummy0\n");
        Files.writeString(d.resolve("node_guid"), "5254:00ff:fe12:3456\n");
        return d;
    }

    /** A hardware adapter's (mlx5): no {@code parent}. */
    private Path mlx5() throws Exception {
        Path d = Files.createDirectories(sysfs.resolve("mlx5_0"));
        Files.writeString(d.resolve("node_guid"), "0c42:a103:0012:3456\n");
        Files.writeString(d.resolve("hca_type"), "MT4119\n");
        return d;
    }

    @Test
    void autoBindsWindowsOnHardwareAndReRegistersOnRxe() throws Exception {
        DisniSettings auto = new DisniSettings(2000);
        assertEquals(MemoryWindows.AUTO, auto.memoryWindows(), "the default");
        assertFalse(auto.windowsOn(rxe()), "rxe runs a retried request's binds again");
        assertTrue(auto.windowsOn(mlx5()));
    }

    @Test
    void onAndOffHoldWhateverTheDevice() throws Exception {
        assertTrue(new DisniSettings(2000, 1, MemoryWindows.ON).windowsOn(rxe()));
        assertFalse(new DisniSettings(2000, 1, MemoryWindows.OFF).windowsOn(mlx5()));
    }

    @Test
    void onlyAutoSwitchesAccessInPlaceAndOnlyOnRxe() throws Exception {
        assertTrue(new DisniSettings(2000).accessToggleOn(rxe()));
        assertFalse(new DisniSettings(2000).accessToggleOn(mlx5()), "another driver may re-register with new keys");
        assertFalse(new DisniSettings(2000, 1, MemoryWindows.OFF).accessToggleOn(rxe()), "off: plain re-registration");
        assertFalse(new DisniSettings(2000, 1, MemoryWindows.ON).accessToggleOn(rxe()), "on: windows");
    }

    @Test
    void parsesAnyCaseAndRefusesTheRest() {
        assertEquals(MemoryWindows.ON, MemoryWindows.parse(" On "));
        assertEquals(MemoryWindows.AUTO, MemoryWindows.parse("auto"));
        assertEquals("memory.windows must be auto, on or off: true",
                assertThrows(IllegalArgumentException.class, () -> MemoryWindows.parse("true")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> MemoryWindows.parse(null));
        assertThrows(IllegalArgumentException.class, () -> new DisniSettings(2000, 1, null));
    }
}
