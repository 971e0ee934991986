package io.rnbd.rnbd.command.completers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.common.Provider;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import java.util.List;
import org.junit.jupiter.api.Test;

/** rnbd:export-add --backend completes what is registered now, a user's own bundle too, each name once. */
class BackendNameCompleterTest {
    @Test
    void offersTheRegisteredBackendsByTheirAnnouncedNames() {
        BackendNameCompleter c = new BackendNameCompleter();
        assertEquals(List.of(), c.names(), "no server: nothing to offer");
        c.admin = new RnbdServerAdmin() {
            @Override
            public List<ExportInfo> exports() {
                return List.of();
            }

            @Override
            public List<Provider> backends() {
                return List.of(new Provider("file", "rnbd-backend-file", "0.1.0", 61, 0),
                        new Provider("memory", "rnbd-backend-memory", "0.1.0", 62, 0),
                        new Provider("memory", "my-faster-memory", "2.0.0", 90, 0),
                        new Provider("simple-file", "org.example.rnbd.backend.simplefile", "1.0.0", 91, 0));
            }

            @Override
            public void forceClose(String export, String session) {
            }

            @Override
            public void resetStats(String export) {
            }
        };
        assertEquals(List.of("file", "memory", "simple-file"), c.names());
    }
}
