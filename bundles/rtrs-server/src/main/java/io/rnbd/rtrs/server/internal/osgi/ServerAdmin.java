package io.rnbd.rtrs.server.internal.osgi;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.function.Supplier;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The {@link RtrsServerAdmin} service: the running server's view and operations, and the
 * operator's {@link #setAuthMethod} over ConfigAdmin: {@code auth.method} of the server's
 * configuration ({@link #PID}), which {@link RtrsServerComponent} takes in place (new paths
 * must pass it; an authentication method alone does not rebuild the server) and which stays
 * across restarts, as its file would.
 */
final class ServerAdmin implements RtrsServerAdmin {
    static final String PID = "io.rnbd.rtrs.server";
    private static final String ANY_LOCATION = "?";

    private final RtrsServerAdmin server;
    private final Supplier<List<String>> authenticators;
    private final Supplier<ConfigurationAdmin> configAdmin;

    /**
     * @param authenticators the names of the authenticators registered now, best-ranked first
     * @param configAdmin    the ConfigAdmin service while there is one, else null
     */
    ServerAdmin(RtrsServerAdmin server, Supplier<List<String>> authenticators,
                Supplier<ConfigurationAdmin> configAdmin) {
        this.server = server;
        this.authenticators = authenticators;
        this.configAdmin = configAdmin;
    }

    @Override
    public synchronized String setAuthMethod(String method) throws IOException {
        String value = Authenticators.configured(method, authenticators.get());
        ConfigurationAdmin ca = configAdmin.get();
        if (ca == null) {
            throw new RtrsAdminException(Errno.EAGAIN, "ConfigAdmin is not running (feature config), so the method "
                    + "cannot be kept; nothing was changed");
        }
        try {
            Configuration c = ca.getConfiguration(PID, ANY_LOCATION);
            Dictionary<String, Object> props = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
            if (value.isEmpty()) {
                props.remove(Authenticators.CONFIG_KEY);
            } else {
                props.put(Authenticators.CONFIG_KEY, value);
            }
            c.update(props);
        } catch (IOException e) {
            throw new RtrsAdminException(Errno.EIO, "cannot write configuration " + PID + ": " + e.getMessage(), e);
        }
        return "server: new paths must pass " + (value.isEmpty() ? "the best-ranked authenticator present" : value)
                + "; established paths keep running";
    }

    // the running server, as it is

    @Override
    public List<RtrsServerSessionInfo> sessions() {
        return server.sessions();
    }

    @Override
    public boolean closeSession(String name) {
        return server.closeSession(name);
    }

    @Override
    public String authMethod() {
        return server.authMethod();
    }
}
