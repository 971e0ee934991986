package io.rnbd.rnbd.client.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class MapComponentTest {
    private final List<String> calls = new ArrayList<>();

    private final RnbdClientAdmin admin = new RnbdClientAdmin() {
        @Override
        public List<DeviceInfo> devices() {
            return List.of();
        }

        @Override
        public CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode) {
            calls.add("map " + device + " " + session + " " + export + " " + mode);
            return new CompletableFuture<>();
        }

        @Override
        public void unmap(String device, boolean force) {
            calls.add("unmap " + device + " " + force);
        }

        @Override
        public CompletableFuture<RemoteBlockDevice> remap(String device) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Long> resize(String device) {
            throw new UnsupportedOperationException();
        }
    };

    private static MapComponent.Config config(String device, String session, String export, String mode) {
        return new MapComponent.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return MapComponent.Config.class;
            }

            @Override
            public String device_name() {
                return device;
            }

            @Override
            public String session_name() {
                return session;
            }

            @Override
            public String export_name() {
                return export;
            }

            @Override
            public String access_mode() {
                return mode;
            }
        };
    }

    @Test
    void mapsOnActivateAndUnmapsOnDeactivate() throws Exception {
        MapComponent c = new MapComponent(admin, config(" rnbd3 ", "s1", "disk", "migration"));
        c.deactivate();
        assertEquals(List.of("map rnbd3 s1 disk MIGRATION", "unmap rnbd3 true"), calls);
    }

    @Test
    void badConfigurationFailsFast() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new MapComponent(admin, config("rnbd0", "s1", "disk", "rw+")));
        assertTrue(e.getMessage().contains("access.mode"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MapComponent(admin, config("rnbd0", "", "disk", "RW")));
        assertThrows(IllegalArgumentException.class, () -> new MapComponent(admin, config("rnbd0", "s1", " ", "RW")));
        assertTrue(calls.isEmpty());
    }
}
