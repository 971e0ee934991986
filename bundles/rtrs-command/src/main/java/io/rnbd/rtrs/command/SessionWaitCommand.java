package io.rnbd.rtrs.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.Session;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * {@code rtrs:session-wait [SESSION...]}: waits until every path of the sessions is connected,
 * or the timeout passes, and says where each stands; for scripts after a start, and for the
 * local console, whose first prompt came while the default session still said "connecting 0/2"
 * (etc/shell.init.script runs it with {@code --console}).
 */
@Service
@Command(scope = "rtrs", name = "session-wait",
        description = "Wait until the client sessions' paths are connected (or the timeout passes)")
public class SessionWaitCommand extends ConsoleCommand {
    @Reference(optional = true)
    BundleContext bundleContext;

    @Reference(optional = true)
    Session session;

    @Argument(index = 0, name = "session", description = "Session names; default every session", multiValued = true)
    @Completion(io.rnbd.rtrs.command.completers.SessionNameCompleter.class)
    List<String> names;

    @Option(name = "--timeout-sec", description = "How long to wait at most (default 30)")
    int timeoutSec = 30;

    @Option(name = "--console", description = "As the local console's start runs it: nothing on other sessions;"
            + " waits for the RTRS client to come up; says nothing when there is no session")
    boolean console;

    /** The admin service, looked up anew each poll (it may come up while this waits). */
    Supplier<RtrsClientAdmin> admin = this::lookup;
    LongSupplier nanoTime = System::nanoTime;
    Sleeper sleeper = Thread::sleep;

    interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /** With --console: how long an RTRS client with no session is given to get its configuration. */
    static final long NO_SESSION_GRACE_MS = 5000;

    @Override
    protected void run(PrintStream out) {
        if (console && (session == null || !Boolean.TRUE.equals(session.get(Session.IS_LOCAL)))) {
            return;
        }
        long start = nanoTime.getAsLong();
        long end = start + TimeUnit.SECONDS.toNanos(timeoutSec);
        long clientSince = -1;
        boolean said = false;
        while (true) {
            long now = nanoTime.getAsLong();
            RtrsClientAdmin a = admin.get();
            if (a == null && !console) {
                ClientSessions.require(null);
            }
            List<RtrsClientSessionInfo> sessions = a == null ? List.of() : selected(a);
            if (a != null && clientSince < 0) {
                clientSince = now;
            }
            if (sessions.isEmpty() && (!console || (clientSince >= 0
                    && now - clientSince >= TimeUnit.MILLISECONDS.toNanos(NO_SESSION_GRACE_MS)))) {
                if (!console) {
                    out.println("no RTRS client session");
                }
                return;
            }
            boolean timedOut = now - end >= 0;
            if (!sessions.isEmpty() && (timedOut || sessions.stream().allMatch(SessionWaitCommand::allConnected))) {
                for (RtrsClientSessionInfo s : sessions) {
                    out.println(line(s, allConnected(s) ? ""
                            : " after " + timeoutSec + " s: rtrs:paths " + s.name() + " shows why"));
                }
                return;
            }
            if (timedOut) {
                return; // --console, and the RTRS client never came up: nothing to say about sessions
            }
            if (!said && !sessions.isEmpty()) {
                for (RtrsClientSessionInfo s : sessions) {
                    if (!allConnected(s)) {
                        out.println(line(s, ", waiting up to " + timeoutSec + " s ..."));
                    }
                }
                said = true;
            }
            try {
                sleeper.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The sessions asked for; a name the client does not have is an error, except at the console's start. */
    private List<RtrsClientSessionInfo> selected(RtrsClientAdmin a) {
        if (names == null || names.isEmpty()) {
            return a.sessions();
        }
        if (console) {
            return a.sessions().stream().filter(s -> names.contains(s.name())).toList();
        }
        return names.stream().map(n -> ClientSessions.session(a, n)).toList();
    }

    private static boolean allConnected(RtrsClientSessionInfo s) {
        return !s.paths().isEmpty() && ClientSessions.connectedPaths(s) == s.paths().size();
    }

    private static String line(RtrsClientSessionInfo s, String tail) {
        return "session " + s.name() + ": " + s.state().name().toLowerCase(java.util.Locale.ROOT) + " ("
                + ClientSessions.connectedPaths(s) + "/" + s.paths().size() + " paths)" + tail;
    }

    private RtrsClientAdmin lookup() {
        if (bundleContext == null) {
            return null;
        }
        ServiceReference<RtrsClientAdmin> ref = bundleContext.getServiceReference(RtrsClientAdmin.class);
        return ref == null ? null : bundleContext.getService(ref);
    }
}
