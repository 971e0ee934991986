package io.rnbd.command.support;

import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Action;

/**
 * What every console command shares: output to the console (or to a test's stream) and
 * failures reported as one {@code Error: ...} line, never as a stack trace.
 */
public abstract class ConsoleCommand implements Action {
    private PrintStream out;

    /** Where to print; the console's System.out unless a test sets another stream. */
    public void setOut(PrintStream out) {
        this.out = out;
    }

    @Override
    public final Object execute() {
        PrintStream o = out != null ? out : System.out;
        try {
            run(o);
        } catch (IllegalArgumentException | IllegalStateException | IOException e) {
            o.println("Error: " + message(e));
        } catch (RuntimeException e) {
            o.println("Error: " + e);
        }
        return null;
    }

    protected abstract void run(PrintStream out) throws IOException;

    /** An exception's message on one line, or its class name when it has none. */
    public static String message(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m.replace('\n', ' ');
    }
}
