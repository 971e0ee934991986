package io.rnbd.rtrs.auth.chap.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.command.support.Out;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rtrs:auth-keys, rtrs:auth-key-add, rtrs:auth-key-remove against a fake ChapKeyAdmin. */
class AuthKeyCommandsTest {
    private static final String SECRET = ChapSecrets.generate(0, 32);
    private static final String CTRL = ChapSecrets.generate(1, 48);

    private final FakeChapKeyAdmin admin = new FakeChapKeyAdmin();

    private AuthKeyAddCommand add(String host) {
        AuthKeyAddCommand c = new AuthKeyAddCommand();
        c.admin = admin;
        c.hostId = host;
        return c;
    }

    @Test
    void listingNeverShowsASecret() {
        admin.put("host-a", SECRET, CTRL);
        admin.put("cfg-b", CTRL, null);
        AuthKeysCommand table = new AuthKeysCommand();
        table.admin = admin;
        String out = Out.run(table);
        AuthKeysCommand json = new AuthKeysCommand();
        json.admin = admin;
        json.json = true;
        String js = Out.run(json);
        for (String o : List.of(out, js)) {
            assertFalse(o.contains("DHHC"), o);
            for (String s : List.of(SECRET, CTRL)) {
                assertFalse(o.contains(s.split(":")[2].substring(0, 12)), o);
            }
        }
        assertEquals(List.of("cfg-b", "none", "32", "no", "config"), Out.row(out, "cfg-b"), out);
        assertEquals(List.of("host-a", "none", "32", "yes", "file"), Out.row(out, "host-a"), out);
        List<Map<String, Object>> keys = MiniJson.array(js);
        assertEquals(Map.of("host_id", "host-a", "transform", "none", "key_length", 32L, "ctrl_key", true,
                "source", "file"), keys.get(1));
    }

    @Test
    void listingIsTheDocumentedTable() {
        admin.put("h1", SECRET, null);
        AuthKeysCommand c = new AuthKeysCommand();
        c.admin = admin;
        String out = Out.run(c);
        assertEquals(List.of(List.of("HOST ID", "TRANSFORM", "KEY BYTES", "CTRL KEY", "SOURCE"),
                List.of("h1", "none", "32", "no", "file")), Out.cells(out), out);
        assertEquals(3, out.lines().count(), "a header, its rule and the row: " + out);
    }

    @Test
    void addWithAGivenSecretDoesNotEchoIt() {
        AuthKeyAddCommand c = add("host-a");
        c.secret = SECRET;
        c.ctrlSecret = CTRL;
        String out = Out.run(c);
        assertEquals("keys of host host-a stored (bidirectional)\n", out);
        assertEquals(SECRET, admin.keys.get("host-a")[0]);
        assertEquals(CTRL, admin.keys.get("host-a")[1]);
    }

    @Test
    void generatedSecretsArePrintedOnceForTheHost() {
        AuthKeyAddCommand c = add("host-g");
        c.generate = true;
        c.generateCtrl = true;
        c.transform = "sha384";
        c.keyLength = "48";
        String out = Out.run(c);
        String host = admin.keys.get("host-g")[0];
        String ctrl = admin.keys.get("host-g")[1];
        for (String s : List.of(host, ctrl)) {
            assertTrue(s.startsWith("DHHC-1:02:"), s);
            // 48 key bytes + 4 CRC bytes
            assertEquals(52, Base64.getDecoder().decode(s.split(":")[2]).length, s);
        }
        assertNotEquals(host, ctrl);
        assertEquals("keys of host host-g stored (bidirectional)\nhost secret: " + host
                + "\nctrl secret: " + ctrl
                + "\nGive the secrets to the host now; they are not shown again.\n", out);
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
        assertTrue(admin.keys.isEmpty());
    }

    @Test
    void removeKnownUnknownConfigAndUnwritable() {
        admin.put("host-a", SECRET, null);
        admin.put("cfg-b", SECRET, null);
        AuthKeyRemoveCommand c = new AuthKeyRemoveCommand();
        c.admin = admin;
        c.hostId = "host-a";
        assertEquals("keys of host host-a removed\n", Out.run(c));
        assertEquals("Error: no keys for host 'host-a' in the keys file\n", Out.run(c));
        c.hostId = "cfg-b";
        assertEquals("Error: the keys of cfg-b come from the configuration\n", Out.run(c));
        c.hostId = "io";
        assertEquals("Error: keys file not writable\n", Out.run(c));
    }

    @Test
    void withoutTheChapServiceEveryKeyCommandSaysSo() {
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
