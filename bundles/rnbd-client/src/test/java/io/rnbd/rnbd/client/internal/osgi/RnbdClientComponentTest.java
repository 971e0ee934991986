package io.rnbd.rnbd.client.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

/** The size refresh's thread: there while the component is, gone when it stops; settings change in place. */
class RnbdClientComponentTest {
    private static RnbdClientComponent.Config refresh(long ms) {
        return new RnbdClientComponent.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return RnbdClientComponent.Config.class;
            }

            @Override
            public long size_refresh_ms() {
                return ms;
            }
        };
    }

    private static long timerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("rnbd-client-timer")).count();
    }

    @Test
    void theRefreshThreadLivesWithTheComponentAndASettingChangeKeepsIt() throws Exception {
        long before = timerThreads();
        RnbdClientComponent c = new RnbdClientComponent(null, refresh(5000));
        assertEquals(before + 1, timerThreads());
        c.modified(refresh(0)); // in place: nothing is unmapped, the thread stays for a later setting
        c.modified(refresh(1000));
        assertThrows(IllegalArgumentException.class, () -> c.modified(refresh(-5)));
        c.deactivate();
        assertEquals(before, timerThreads(), "thread left after deactivate");
    }

    @Test
    void aNegativeRefreshFailsActivation() {
        assertThrows(IllegalArgumentException.class, () -> new RnbdClientComponent(null, refresh(-1)));
    }
}
