package io.rnbd.command.support;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

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

    /**
     * A table as Karaf's ShellTable printed it, as cells: one list per line, the header first,
     * the rule under it left out; whichever separator the stream's charset allowed ("|" or "│").
     */
    public static List<List<String>> cells(String table) {
        return table.lines().filter(l -> !l.matches("[-─+┼ ]+"))
                .map(l -> Arrays.stream(l.split("\\s*[|│]\\s*", -1)).map(String::strip).toList()).toList();
    }

    /** The row whose first cell is {@code first}; AssertionError if there is none. */
    public static List<String> row(String table, String first) {
        return cells(table).stream().filter(r -> r.get(0).equals(first)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + first + " in\n" + table));
    }
}
