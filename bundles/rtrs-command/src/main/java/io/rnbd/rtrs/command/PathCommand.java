package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.command.completers.PathNameCompleter;
import io.rnbd.rtrs.command.completers.SessionNameCompleter;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import java.io.PrintStream;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
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
        String p = path.trim();
        Set<String> before = names();
        apply(admin, session, p);
        out.println(done() + ": " + describe(p, before));
    }

    abstract void apply(RtrsClientAdmin admin, String session, String path);

    /** "path added", in the past tense. */
    abstract String done();

    private Set<String> names() {
        return admin.session(session).map(s -> s.paths().stream().map(RtrsClientPathInfo::name)
                .collect(Collectors.toCollection(LinkedHashSet::new))).orElseGet(LinkedHashSet::new);
    }

    /**
     * The path as {@code rtrs:paths} lists it ({@code src@dst:port}), whatever the user typed
     * ({@code src@dst}, {@code dst}, with or without the port): the one that appeared, the one
     * that went, or the one the address names.
     */
    private String describe(String p, Set<String> before) {
        Optional<RtrsClientPathInfo> now = admin.session(session).flatMap(s -> {
            List<RtrsClientPathInfo> paths = s.paths();
            return paths.stream().filter(i -> !before.contains(i.name())).findFirst()
                    .or(() -> paths.stream().filter(i -> i.name().equals(p)).findFirst())
                    .or(() -> paths.stream().filter(i -> names(p, i)).findFirst());
        });
        if (now.isPresent()) {
            RtrsClientPathInfo i = now.get();
            return "session " + session + " path " + i.name() + " " + Formats.lower(i.state())
                    + (i.lastError() != 0 ? " (" + Formats.errno(i.lastError()) + ")" : "");
        }
        Set<String> gone = new LinkedHashSet<>(before);
        gone.removeAll(names());
        return "session " + session + " path " + (gone.size() == 1 ? gone.iterator().next() : p);
    }

    /** Whether {@code [src@]dst[:port]} names {@code i}: the same addresses, and port if given. */
    static boolean names(String p, RtrsClientPathInfo i) {
        int at = p.indexOf('@');
        String src = at >= 0 ? p.substring(0, at) : null;
        String dst = p.substring(at + 1);
        String port = null;
        int colon = dst.lastIndexOf(':');
        if (colon > 0 && dst.indexOf(':') == colon) {
            port = dst.substring(colon + 1);
            dst = dst.substring(0, colon);
        }
        String iDst = i.dstAddress();
        String iPort = "";
        int c = iDst.lastIndexOf(':');
        if (c > 0 && iDst.indexOf(':') == c) {
            iPort = iDst.substring(c + 1);
            iDst = iDst.substring(0, c);
        }
        return dst.equals(iDst) && (src == null || src.equals(i.srcAddress())) && (port == null || port.equals(iPort));
    }
}
