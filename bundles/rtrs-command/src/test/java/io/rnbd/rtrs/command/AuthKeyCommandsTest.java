package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** rtrs:auth-keys, rtrs:auth-key-add, rtrs:auth-key-remove. */
class AuthKeyCommandsTest {
    private static final String SECRET = ChapSecrets.generate(0, 32);
    private static final String CTRL = ChapSecrets.generate(1, 48);

    /** Keeps the secrets, as the real store does, so a leak into the listing would show. */
    private static final class FakeStore implements AuthKeyStore {
        final Map<String, String[]> keys = new TreeMap<>();
        final List<String> generated = new ArrayList<>();

        @Override
        public List<KeyInfo> list() {
            return keys.entrySet().stream().map(e -> new KeyInfo(e.getKey(), "none", 32, e.getValue()[1] != null,
                    e.getKey().startsWith("cfg") ? "config" : "file")).toList();
        }

        @Override
        public void put(String hostId, String hostSecret, String ctrlSecret) {
            if (!hostSecret.startsWith("DHHC-1:")) {
                throw new IllegalArgumentException("host secret is not in DHHC-1 format");
            }
            keys.put(hostId, new String[] {hostSecret, ctrlSecret});
        }

        @Override
        public boolean remove(String hostId) throws IOException {
            if (hostId.startsWith("cfg")) {
                throw new IllegalStateException("the keys of " + hostId + " come from the configuration");
            }
            if (hostId.equals("io")) {
                throw new IOException("keys file not writable");
            }
            return keys.remove(hostId) != null;
        }

        @Override
        public String generate(int transform, int keyLength) {
            String s = ChapSecrets.generate(transform, keyLength);
            generated.add(s);
            return s;
        }
    }

    private final FakeStore store = new FakeStore();

    private AuthKeyAddCommand add(String host) {
        AuthKeyAddCommand c = new AuthKeyAddCommand();
        c.store = store;
        c.hostId = host;
        return c;
    }

    @Test
    void listingNeverShowsASecret() {
        store.put("host-a", SECRET, CTRL);
        store.put("cfg-b", CTRL, null);
        AuthKeysCommand table = new AuthKeysCommand();
        table.store = store;
        String out = Out.run(table);
        AuthKeysCommand json = new AuthKeysCommand();
        json.store = store;
        json.json = true;
        String js = Out.run(json);
        for (String o : List.of(out, js)) {
            assertFalse(o.contains("DHHC"), o);
            for (String s : List.of(SECRET, CTRL)) {
                assertFalse(o.contains(s.split(":")[2].substring(0, 12)), o);
            }
        }
        List<String> lines = out.lines().toList();
        assertTrue(lines.get(1).matches("cfg-b\\s+none\\s+32\\s+no\\s+config"), out);
        assertTrue(lines.get(2).matches("host-a\\s+none\\s+32\\s+yes\\s+file"), out);
        List<Map<String, Object>> keys = MiniJson.array(js);
        assertEquals(Map.of("host_id", "host-a", "transform", "none", "key_length", 32L, "ctrl_key", true,
                "source", "file"), keys.get(1));
    }

    @Test
    void addWithAGivenSecretDoesNotEchoIt() {
        AuthKeyAddCommand c = add("host-a");
        c.secret = SECRET;
        c.ctrlSecret = CTRL;
        String out = Out.run(c);
        assertEquals("keys of host host-a stored (bidirectional)\n", out);
        assertEquals(SECRET, store.keys.get("host-a")[0]);
        assertEquals(CTRL, store.keys.get("host-a")[1]);
    }

    @Test
    void generatedSecretsArePrintedOnceForTheHost() {
        AuthKeyAddCommand c = add("host-g");
        c.generate = true;
        c.generateCtrl = true;
        c.transform = "sha384";
        c.keyLength = "48";
        String out = Out.run(c);
        assertEquals(2, store.generated.size());
        assertTrue(store.generated.get(0).startsWith("DHHC-1:02:"), store.generated.get(0));
        assertEquals("keys of host host-g stored (bidirectional)\nhost secret: " + store.generated.get(0)
                + "\nctrl secret: " + store.generated.get(1)
                + "\nGive the secrets to the host now; they are not shown again.\n", out);
        assertEquals(store.generated.get(0), store.keys.get("host-g")[0]);
    }

    @Test
    void badArgumentsAreOneLineAndStoreNothing() {
        AuthKeyAddCommand none = add("h");
        assertEquals("Error: give exactly one of --secret and --generate\n", Out.run(none));
        AuthKeyAddCommand both = add("h");
        both.secret = SECRET;
        both.generate = true;
        assertEquals("Error: give exactly one of --secret and --generate\n", Out.run(both));
        AuthKeyAddCommand ctrl = add("h");
        ctrl.generate = true;
        ctrl.ctrlSecret = CTRL;
        ctrl.generateCtrl = true;
        assertEquals("Error: give at most one of --ctrl-secret and --generate-ctrl\n", Out.run(ctrl));
        AuthKeyAddCommand tr = add("h");
        tr.generate = true;
        tr.transform = "md5";
        assertEquals("Error: unknown transform 'md5' (none, sha256, sha384, sha512)\n", Out.run(tr));
        AuthKeyAddCommand len = add("h");
        len.generate = true;
        len.keyLength = "16";
        assertEquals("Error: key length must be 32, 48 or 64 bytes, not 16\n", Out.run(len));
        AuthKeyAddCommand text = add("h");
        text.generate = true;
        text.keyLength = "long";
        assertEquals("Error: key length must be 32, 48 or 64 bytes, not long\n", Out.run(text));
        AuthKeyAddCommand blank = add(" ");
        blank.generate = true;
        assertEquals("Error: the host id must not be empty\n", Out.run(blank));
        AuthKeyAddCommand bad = add("h");
        bad.secret = "hunter2";
        String out = Out.run(bad);
        assertEquals("Error: host secret is not in DHHC-1 format\n", out);
        assertTrue(store.keys.isEmpty());
        assertTrue(store.generated.isEmpty());
    }

    @Test
    void removeKnownUnknownConfigAndUnwritable() {
        store.put("host-a", SECRET, null);
        store.put("cfg-b", SECRET, null);
        AuthKeyRemoveCommand c = new AuthKeyRemoveCommand();
        c.store = store;
        c.hostId = "host-a";
        assertEquals("keys of host host-a removed\n", Out.run(c));
        assertEquals("Error: no keys for host 'host-a' in the keys file\n", Out.run(c));
        c.hostId = "cfg-b";
        assertEquals("Error: the keys of cfg-b come from the configuration\n", Out.run(c));
        c.hostId = "io";
        assertEquals("Error: keys file not writable\n", Out.run(c));
    }

    @Test
    void withoutTheChapBundleEveryKeyCommandSaysSo() {
        String expected = "Error: the chap authentication bundle is not installed\n";
        assertEquals(expected, Out.run(new AuthKeysCommand()));
        AuthKeyAddCommand a = new AuthKeyAddCommand();
        a.hostId = "h";
        a.generate = true;
        assertEquals(expected, Out.run(a));
        AuthKeyRemoveCommand r = new AuthKeyRemoveCommand();
        r.hostId = "h";
        assertEquals(expected, Out.run(r));
    }
}
