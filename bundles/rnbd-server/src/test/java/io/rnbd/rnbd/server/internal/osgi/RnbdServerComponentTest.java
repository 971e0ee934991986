package io.rnbd.rnbd.server.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import java.lang.annotation.Annotation;
import java.util.Dictionary;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The component's own decisions, without a framework: an export whose component goes away
 * while the bundle stops stays with the server until the server itself goes (requests still
 * arrive then, and an OPEN must not be told ENOENT); one whose configuration is deleted while
 * the bundle runs is removed at once.
 */
class RnbdServerComponentTest {

    @Test
    void exportsStayWhileTheBundleStopsAndGoWhenTheirConfigurationDoes() throws Exception {
        AtomicBoolean stopping = new AtomicBoolean();
        RnbdServerComponent component = new RnbdServerComponent(config(), stopping::get);
        try {
            ExportComponent deleted = export("deleted");
            ExportComponent kept = export("kept");
            component.bindExport(deleted);
            component.bindExport(kept);
            assertEquals(List.of("deleted", "kept"), names(component));

            component.unbindExport(deleted);
            assertEquals(List.of("kept"), names(component), "configuration deleted while running: removed");

            stopping.set(true);
            component.unbindExport(kept);
            assertEquals(List.of("kept"), names(component), "bundle stopping: kept until the server goes");
        } finally {
            component.deactivate();
        }
        assertEquals(List.of(), names(component), "gone with the server");
    }

    @Test
    void theServerIsPublishedWithTheComponentsPropertiesButThePrivateOnes() {
        Map<String, Object> props = Map.of("service.ranking", 5, ".secret", "x", "dev.search.path", "/");
        Dictionary<String, Object> published = RnbdServerComponent.serviceProperties(props);
        assertEquals(5, published.get("service.ranking"));
        assertEquals("/", published.get("dev.search.path"));
        assertEquals(2, published.size());
    }

    private static List<String> names(RnbdServerComponent component) {
        return component.server().exports().stream().map(ExportInfo::name).sorted().toList();
    }

    private static ExportComponent export(String name) {
        return new ExportComponent(Map.of("name", name, "backend", "memory"));
    }

    private static RnbdServerComponent.Config config() {
        return new RnbdServerComponent.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return RnbdServerComponent.Config.class;
            }

            @Override
            public String dev_search_path() {
                return "/";
            }

            @Override
            public long backend_timeout_ms() {
                return 25_000;
            }

            @Override
            public long open_grace_ms() {
                return 0;
            }

            @Override
            public long open_retry_ms() {
                return 0;
            }

            @Override
            public String server_name() {
                return "";
            }

            @Override
            public long ha_holdoff_ms() {
                return 10_000;
            }

            @Override
            public long ha_probe_ms() {
                return 1_000;
            }
        };
    }
}
