package io.rnbd.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LoadGenMainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return LoadGenMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void runsAVerifiedLoadOnTheMemoryBackend() {
        assertEquals(0, run("--size", "16m", "--rw", "randrw", "--rwmixread", "70", "--bs", "8k", "--qd", "16",
                "--ios", "20000", "--runtime", "0", "--verify", "--quiet"));
        String table = out.toString(StandardCharsets.UTF_8);
        assertTrue(table.startsWith("memory{size=16m}: randrw 70% reads, bs 8k, qd 16, batch 4, 20000 IOs, verify\n"), table);
        assertTrue(table.matches("(?s).*\ntotal +20000 .*"), table);
        assertTrue(table.contains("mismatches 0"), table);
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void printsJson() {
        assertEquals(0, run("--rw", "read", "--ios", "1000", "--json", "--quiet"));
        String json = out.toString(StandardCharsets.UTF_8);
        assertTrue(json.startsWith("{\"device\":\"memory{size=1g}\",\"workload\":\"read\","), json);
        assertTrue(json.contains("\"total\":{\"ios\":1000,"), json);
    }

    @Test
    void badArgumentsExitWithTwo() {
        assertEquals(2, run("--qd"));
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("Error: --qd needs a value\nusage:"));
        err.reset();
        assertEquals(2, run("--backend", "tape"));
        assertEquals("Error: no 'tape' backend on the class path\n", err.toString(StandardCharsets.UTF_8));
        err.reset();
        assertEquals(2, run("--size", "1k", "--quiet"));
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("Error: "), err.toString(StandardCharsets.UTF_8));
    }
}
