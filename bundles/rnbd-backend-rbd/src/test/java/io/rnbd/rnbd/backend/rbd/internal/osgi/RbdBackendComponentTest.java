package io.rnbd.rnbd.backend.rbd.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.annotation.Annotation;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The service the server meets is this component: each open it takes, the shared one of an
 * export of several servers included, must reach the backend (a default method of BlockBackend
 * would answer EOPNOTSUPP instead: seen, a whole RbdHaIT run long).
 */
class RbdBackendComponentTest {
    @Test
    void everyOpenReachesTheBackend() {
        RbdBackendComponent c = new RbdBackendComponent(new RbdBackendComponent.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return RbdBackendComponent.Config.class;
            }

            @Override
            public String pool() {
                return "rbd";
            }

            @Override
            public String conf() {
                return "/nonexistent/ceph.conf";
            }

            @Override
            public String id() {
                return "admin";
            }

            @Override
            public String keyring() {
                return "";
            }

            @Override
            public int op_timeout_sec() {
                return 0;
            }

            @Override
            public int connect_timeout_sec() {
                return 1;
            }
        });
        try {
            for (IOException e : new IOException[] {
                    assertThrows(IOException.class, () -> c.open(Map.of("image", "x"), false)),
                    assertThrows(IOException.class, () -> c.openShared(Map.of("image", "x")))}) {
                assertTrue(e.getMessage().startsWith("rbd backend") && !e.getMessage().contains("one server"),
                        "the backend's own answer: " + e.getMessage());
            }
        } finally {
            c.deactivate();
        }
    }
}
