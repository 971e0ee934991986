package io.rnbd.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What was logged while it was open, for tests that promise "a clear log line". The tests'
 * logger (slf4j-simple) writes to whatever {@code System.err} is at the time of each line,
 * so this tees {@code System.err} into a buffer (the output still reaches the console) and
 * puts the original back on {@link #close()}. Lines of every thread are captured.
 *
 * <pre>
 *   try (LogCapture log = LogCapture.start()) {
 *       ...
 *       assertTrue(log.contains("refusing"), log.text());
 *   }
 * </pre>
 */
public final class LogCapture implements AutoCloseable {
    private final PrintStream original;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

    private LogCapture() {
        original = System.err;
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (buffer) {
                    buffer.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (buffer) {
                    buffer.write(b, off, len);
                }
                original.write(b, off, len);
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    public static LogCapture start() {
        return new LogCapture();
    }

    /** Everything captured so far. */
    public String text() {
        synchronized (buffer) {
            return buffer.toString(StandardCharsets.UTF_8);
        }
    }

    public List<String> lines() {
        return text().lines().toList();
    }

    /** Whether any captured line contains {@code fragment}. */
    public boolean contains(String fragment) {
        return text().contains(fragment);
    }

    @Override
    public void close() {
        System.err.flush();
        System.setErr(original);
    }
}
