package io.rnbd.command.support;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A plain text table: a header row and left-aligned columns separated by two spaces. */
public final class TextTable {
    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();

    public TextTable(String... header) {
        this.header = header.clone();
    }

    public TextTable row(Object... cells) {
        if (cells.length != header.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, header " + header.length);
        }
        rows.add(Arrays.stream(cells).map(c -> c == null ? "" : oneLine(c.toString())).toArray(String[]::new));
        return this;
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    public void print(PrintStream out) {
        int[] width = new int[header.length];
        for (int i = 0; i < header.length; i++) {
            width[i] = header[i].length();
            for (String[] r : rows) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        line(out, header, width);
        for (String[] r : rows) {
            line(out, r, width);
        }
    }

    private static void line(PrintStream out, String[] cells, int[] width) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            sb.append(cells[i]);
            if (i < cells.length - 1) {
                sb.append(" ".repeat(width[i] - cells[i].length() + 2));
            }
        }
        out.println(sb.toString().stripTrailing());
    }

    // a name with a newline must not break the table's rows apart
    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
    }
}
