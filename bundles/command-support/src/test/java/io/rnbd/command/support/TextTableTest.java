package io.rnbd.command.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class TextTableTest {
    @Test
    void alignsColumnsAndKeepsEachRowOnOneLine() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        new TextTable("A", "LONG HEADER", "C").row("xyz", 1, null).row("q", "two\nlines", "c")
                .print(new PrintStream(b, true, StandardCharsets.UTF_8));
        assertEquals("""
                A    LONG HEADER  C
                xyz  1
                q    two lines    c
                """, b.toString(StandardCharsets.UTF_8));
    }

    @Test
    void refusesRowsOfTheWrongWidth() {
        assertThrows(IllegalArgumentException.class, () -> new TextTable("A", "B").row("only one"));
    }
}
