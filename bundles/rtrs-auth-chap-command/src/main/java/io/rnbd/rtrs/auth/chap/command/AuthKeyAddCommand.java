package io.rnbd.rtrs.auth.chap.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.StringsCompleter;

/**
 * {@code rtrs:auth-key-add HOSTID --secret DHHC-1:..|--generate [--ctrl-secret ..|--generate-ctrl]}.
 * A generated secret is printed once, because the host must be given it; nothing else ever
 * prints a secret.
 */
@Service
@Command(scope = "rtrs", name = "auth-key-add", description = "Add or replace the CHAP keys of a host id")
public class AuthKeyAddCommand extends ConsoleCommand {
    private static final List<String> TRANSFORMS = List.of("none", "sha256", "sha384", "sha512");

    @Reference(optional = true)
    ChapKeyAdmin admin;

    @Argument(index = 0, name = "hostid", description = "Host id of the client (its host.id)", required = true)
    String hostId;

    @Option(name = "--secret", description = "The host's secret, DHHC-1:hh:base64:")
    String secret;

    @Option(name = "--generate", description = "Generate the host's secret (printed once)")
    boolean generate;

    @Option(name = "--ctrl-secret", description = "The server's secret for bidirectional authentication, DHHC-1:hh:base64:")
    String ctrlSecret;

    @Option(name = "--generate-ctrl", description = "Generate the server's secret for bidirectional authentication (printed once)")
    boolean generateCtrl;

    @Option(name = "--transform", description = "Key transform of generated secrets: none, sha256, sha384, sha512")
    @Completion(value = StringsCompleter.class, values = {"none", "sha256", "sha384", "sha512"})
    String transform = "none";

    // a String, so a bad number gets our one-line error rather than the shell's conversion message
    @Option(name = "--key-length", description = "Length of generated secrets in bytes: 32, 48 or 64")
    String keyLength = "32";

    @Override
    protected void run(PrintStream out) throws IOException {
        ChapKeyAdmin keys = ChapKeys.require(admin);
        if (hostId.isBlank()) {
            throw new IllegalArgumentException("the host id must not be empty");
        }
        if ((secret != null) == generate) {
            throw new IllegalArgumentException("give exactly one of --secret and --generate");
        }
        if (ctrlSecret != null && generateCtrl) {
            throw new IllegalArgumentException("give at most one of --ctrl-secret and --generate-ctrl");
        }
        int t = TRANSFORMS.indexOf(transform.toLowerCase(Locale.ROOT));
        if (t < 0) {
            throw new IllegalArgumentException("unknown transform '" + transform + "' (none, sha256, sha384, sha512)");
        }
        if (!List.of("32", "48", "64").contains(keyLength.trim())) {
            throw new IllegalArgumentException("key length must be 32, 48 or 64 bytes, not " + keyLength);
        }
        int length = Integer.parseInt(keyLength.trim());
        String host = generate ? ChapSecrets.generate(t, length) : secret;
        String ctrl = generateCtrl ? ChapSecrets.generate(t, length) : ctrlSecret;
        keys.put(hostId, host, ctrl);
        out.println("keys of host " + hostId + " stored" + (ctrl != null ? " (bidirectional)" : ""));
        if (generate) {
            out.println("host secret: " + host);
        }
        if (generateCtrl) {
            out.println("ctrl secret: " + ctrl);
        }
        if (generate || generateCtrl) {
            out.println("Give the secrets to the host now; they are not shown again.");
        }
    }
}
