package io.rnbd.bench;

import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.rdma.soft.internal.SoftDevice;
import java.util.ArrayList;
import java.util.List;

/**
 * The appliance settings a benchmark JVM runs with that differ from the default profile's, so
 * that the scripts print them beside every figure (issue 36: a figure is what ships unless it
 * says otherwise). The defaults come from the code that ships them, not from a second list.
 */
final class Settings {
    private Settings() {
    }

    /** What the RNBD stack ({@link SoftStack}) sets that the default profile does not. */
    static List<String> stack() {
        List<String> l = new ArrayList<>();
        boolean profile = SoftStack.TOPOLOGY.equals("profile");
        String client = profile ? "devices" : "client device";
        if (SoftStack.POLL_USEC != SoftDevice.DEFAULT_POLL_USEC) {
            l.add(client + " poll.usec=" + SoftStack.POLL_USEC);
        }
        if (!profile && SoftStack.SERVER_POLL_USEC != SoftDevice.DEFAULT_POLL_USEC) {
            l.add("server device poll.usec=" + SoftStack.SERVER_POLL_USEC);
        }
        if (SoftStack.IO_THREADS != 1) {
            l.add(client + " io.threads=" + SoftStack.IO_THREADS);
        }
        if (!profile && SoftStack.SERVER_IO_THREADS != 1) {
            l.add("server device io.threads=" + SoftStack.SERVER_IO_THREADS);
        }
        return l;
    }

    /** The stack's, and the NBD gateway's poll.usec when it is not the default. */
    static List<String> gateway(int pollUsec) {
        List<String> l = stack();
        if (pollUsec != NbdServerConfig.DEFAULT_POLL_USEC) {
            l.add("gateway poll.usec=" + pollUsec);
        }
        return l;
    }

    /** The line the scripts look for: "SETTINGS default" or "SETTINGS a; b". */
    static String line(List<String> nonDefault, boolean alwaysInvalidate) {
        List<String> l = new ArrayList<>(nonDefault);
        if (!alwaysInvalidate) {
            l.add("always.invalidate=false");
        }
        return "SETTINGS " + (l.isEmpty() ? "default" : String.join("; ", l));
    }
}
