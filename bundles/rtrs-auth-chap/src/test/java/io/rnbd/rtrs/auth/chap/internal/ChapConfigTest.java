package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChapConfigTest {
    private final String secret = Chaps.secret(1, 32);

    @Test
    void parsesSettingsKeysAndFile() {
        ChapConfig c = ChapConfig.parse("tgt", "sha256, sha512", "null,ffdhe3072", "${karaf.etc}/rnbd-chap.keys",
                Map.of("host.h1", secret, "ctrl.h1", Chaps.secret(3, 64), "host.h2", secret, "other", "x"),
                name -> name.equals("karaf.etc") ? "/opt/karaf/etc" : null);
        assertEquals(List.of(ChapHash.SHA256, ChapHash.SHA512), c.settings().hashes());
        assertEquals(List.of(DhGroup.NULL, DhGroup.FFDHE3072), c.settings().dhGroups());
        assertEquals("tgt", c.settings().targetId());
        assertEquals(Path.of("/opt/karaf/etc/rnbd-chap.keys"), c.keysFile());
        assertEquals(2, c.inlineKeys().size());
        assertTrue(c.inlineKeys().get("h1").hasCtrlKey());
    }

    @Test
    void defaultsParse() {
        ChapConfig c = ChapConfig.parse("t", ChapSettings.DEFAULT_HASHES, ChapSettings.DEFAULT_DH_GROUPS, "",
                Map.of(), n -> null);
        assertEquals(3, c.settings().hashes().size());
        assertEquals(6, c.settings().dhGroups().size());
        assertNull(c.keysFile());
    }

    @Test
    void unresolvablePlaceholderMeansNoFile() {
        assertNull(ChapConfig.resolve("${karaf.etc}/rnbd-chap.keys", n -> null));
        assertEquals(Path.of("/x/k"), ChapConfig.resolve("/x/k", n -> null));
        assertThrows(IllegalArgumentException.class, () -> ChapConfig.resolve("${oops/k", n -> null));
    }

    @Test
    void badValuesFailFastWithoutLeakingSecrets() {
        assertThrows(IllegalArgumentException.class, () -> ChapConfig.parse("t", "md5", "null", "", Map.of(), n -> null));
        assertThrows(IllegalArgumentException.class, () -> ChapConfig.parse("t", "sha256", "modp", "", Map.of(), n -> null));
        assertThrows(IllegalArgumentException.class, () -> ChapConfig.parse("t", "", "null", "", Map.of(), n -> null));
        assertThrows(IllegalArgumentException.class, () -> ChapConfig.parse("bad id", "sha256", "null", "", Map.of(), n -> null));
        String truncated = secret.substring(0, secret.length() - 6) + ":";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChapConfig.parse("t", "sha256", "null", "", Map.of("host.h", truncated), n -> null));
        assertTrue(e.getMessage().startsWith("configuration: host.h: "), e.getMessage());
        DhchapKeyTest.assertNoLeak(truncated, e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> ChapConfig.parse("t", "sha256", "null", "", Map.of("ctrl.h", secret), n -> null));
    }
}
