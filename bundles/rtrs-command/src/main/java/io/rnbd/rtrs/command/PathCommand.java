package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.command.completers.PathNameCompleter;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;

/**
 * The SESSION PATH verbs (add, remove, reconnect, disconnect): check the session, act,
 * then show where the path stands.
 */
abstract class PathCommand extends ConsoleCommand {
    @Reference(optional = true)
    RtrsClientAdmin admin;

    @Argument(index = 0, name = "session", description = "Session name", required = true)
    @Completion(SessionNameCompleter.class)
    String session;

    @Argument(index = 1, name = "path", description = "Path as [src@]dst[:port], e.g. 10.0.0.1@10.0.0.2",
            required = true)
    @Completion(PathNameCompleter.class)
    String path;

    @Override
    protected final void run(PrintStream out) {
        ClientSessions.session(admin, session);
        if (path.isBlank()) {
            throw new IllegalArgumentException("the path must not be empty");
        }
        apply(admin, session, path.trim());
        out.println(done() + ": " + describe(path.trim()));
    }

    abstract void apply(RtrsClientAdmin admin, String session, String path);

    /** "path added", in the past tense. */
    abstract String done();

    private String describe(String p) {
        return admin.session(session).flatMap(s -> s.paths().stream()
                        .filter(i -> i.name().equals(p) || i.dstAddress().equals(p)).findFirst())
                .map(i -> "session " + session + " path " + i.name() + " " + Formats.lower(i.state())
                        + (i.lastError() != 0 ? " (" + Formats.errno(i.lastError()) + ")" : ""))
                .orElse("session " + session + " path " + p);
    }
}
