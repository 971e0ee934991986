package io.rnbd.command.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.PrintStream;
import org.junit.jupiter.api.Test;

class ConsoleCommandTest {
    /** A command that throws what the test gives it, or prints "ok". */
    private static final class Throwing extends ConsoleCommand {
        private final Exception failure;

        Throwing(Exception failure) {
            this.failure = failure;
        }

        @Override
        protected void run(PrintStream out) throws IOException {
            if (failure instanceof IOException e) {
                throw e;
            }
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            out.println("ok");
        }
    }

    @Test
    void printsWhatTheCommandPrints() {
        assertEquals("ok\n", Out.run(new Throwing(null)));
    }

    @Test
    void expectedFailuresAreOneLineWithTheirMessage() {
        assertEquals("Error: no such session: blk1\n",
                Out.run(new Throwing(new IllegalArgumentException("no such session: blk1"))));
        assertEquals("Error: two lines\n", Out.run(new Throwing(new IllegalStateException("two\nlines"))));
        assertEquals("Error: IOException\n", Out.run(new Throwing(new IOException())));
    }

    @Test
    void unexpectedFailuresNameTheirClass() {
        assertEquals("Error: java.lang.UnsupportedOperationException: nope\n",
                Out.run(new Throwing(new UnsupportedOperationException("nope"))));
    }
}
