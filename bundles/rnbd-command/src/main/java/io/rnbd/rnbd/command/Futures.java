package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for an admin future and turns its failure into the one line the console prints. */
final class Futures {
    private Futures() {
    }

    /**
     * @param what    the subject of the error line, e.g. "rnbd0"
     * @param waiting why an answer may be late, for the timeout line (e.g. "rnbd0 is pending")
     */
    static <T> T await(CompletableFuture<T> f, long timeoutMillis, String what, String waiting) throws IOException {
        try {
            return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // a BlockIoException's message starts with its errno name (ENOENT: ...)
            throw new IOException(what + ": " + ConsoleCommand.message(e.getCause() == null ? e : e.getCause()));
        } catch (TimeoutException e) {
            throw new IOException(what + ": no answer within " + timeoutMillis + " ms (" + waiting + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(what + ": interrupted");
        }
    }
}
