package io.rnbd.telemetry.jmx.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * A console command line built from an operation's arguments, then run. The operations that
 * the console carries out as configuration (map, unmap, export-add, export-remove: factory
 * configurations, checks, a wait for the outcome) run the console's own command, so JMX and
 * the console cannot drift apart. Values are restricted to what names, sizes and paths are
 * made of and may not start with a dash, so an argument can never become an option (a device
 * named "--force") or a second command.
 */
final class ConsoleLine {
    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._:@/,+][A-Za-z0-9._:@/,+-]*");
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._][A-Za-z0-9._-]*");

    private final List<String> words = new ArrayList<>();

    private ConsoleLine(String command) {
        words.add(command);
    }

    static ConsoleLine of(String command) {
        return new ConsoleLine(command);
    }

    ConsoleLine option(String name, String value) {
        if (value != null && !value.isEmpty()) {
            words.add(name);
            words.add(safe(name, value));
        }
        return this;
    }

    /**
     * {@code name KEY=VALUE} for each parameter: a key of letters, digits and {@code . _ -}, a
     * value as any other argument's.
     */
    ConsoleLine params(String name, String[] params) {
        for (String p : params == null ? new String[0] : params) {
            int eq = p == null ? -1 : p.indexOf('=');
            if (eq < 1 || !KEY.matcher(p.substring(0, eq)).matches()) {
                throw new IllegalArgumentException("parameter '" + p + "' is not KEY=VALUE (a key of letters, digits "
                        + "and . _ -)");
            }
            words.add(name);
            words.add(p.substring(0, eq) + "=" + safe("parameter " + p.substring(0, eq), p.substring(eq + 1)));
        }
        return this;
    }

    ConsoleLine flag(String name, boolean set) {
        if (set) {
            words.add(name);
        }
        return this;
    }

    ConsoleLine arg(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(what + " is required");
        }
        words.add(safe(what, value));
        return this;
    }

    private static String safe(String what, String value) {
        if (!SAFE.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " '" + value + "' is not accepted here (letters, digits and "
                    + ". _ : @ / , + -, not starting with -)");
        }
        return value;
    }

    String text() {
        return String.join(" ", words);
    }

    /**
     * Runs the line; returns the console's answer, or throws IllegalArgumentException with the
     * console's one-line error (without "Error: ").
     */
    String run(Supplier<ConsoleRunner> console) {
        ConsoleRunner runner = console.get();
        if (runner == null) {
            throw new IllegalStateException("the Karaf shell is not running: " + words.get(0) + " needs it");
        }
        String out = runner.execute(text()).strip();
        for (String line : out.lines().toList()) {
            if (line.startsWith("Error: ")) {
                throw new IllegalArgumentException(line.substring("Error: ".length()));
            }
        }
        return out;
    }
}
