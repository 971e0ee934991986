package io.rnbd.rtrs.command.internal.chap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import io.rnbd.rtrs.command.AuthKeyStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChapKeyStoreTest {
    private final List<String> calls = new ArrayList<>();
    private final ChapKeyAdmin admin = new ChapKeyAdmin() {
        @Override
        public List<ChapKeyInfo> list() {
            return List.of(new ChapKeyInfo("h1", "sha256", 48, true, ChapKeyInfo.SOURCE_FILE));
        }

        @Override
        public void put(String hostId, String hostSecret, String ctrlSecret) {
            calls.add("put " + hostId + " " + hostSecret + " " + ctrlSecret);
        }

        @Override
        public boolean remove(String hostId) {
            calls.add("remove " + hostId);
            return hostId.equals("h1");
        }
    };

    @Test
    void passesEverythingThroughToTheChapAdmin() throws Exception {
        AuthKeyStore store = ChapKeyStore.of(admin);
        assertEquals(List.of(new AuthKeyStore.KeyInfo("h1", "sha256", 48, true, "file")), store.list());
        store.put("h2", "DHHC-1:00:x:", null);
        assertTrue(store.remove("h1"));
        assertFalse(store.remove("h9"));
        assertEquals(List.of("put h2 DHHC-1:00:x: null", "remove h1", "remove h9"), calls);
    }

    @Test
    void generatesDhhcSecretsOfTheAskedShape() {
        String s = new ChapKeyStore(admin).generate(3, 64);
        assertTrue(s.matches("DHHC-1:03:[A-Za-z0-9+/=]+:"), s);
        // 64 key bytes + 4 CRC bytes, base64
        assertEquals(92, s.split(":")[2].length());
    }
}
