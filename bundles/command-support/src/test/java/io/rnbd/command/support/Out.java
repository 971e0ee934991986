package io.rnbd.command.support;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs a command the way the shell does and returns what it printed. */
public final class Out {
    private Out() {
    }

    public static String run(ConsoleCommand c) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        c.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        Object r = c.execute();
        if (r != null) {
            throw new AssertionError("commands print, they return nothing: " + r);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
