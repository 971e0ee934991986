package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.Authenticators;
import io.rnbd.rtrs.api.RtrsAdminException;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The {@link RtrsClientAdmin} service: the running client's view and operations, and the
 * operator's {@link #setAuthMethod} over ConfigAdmin: {@code auth.method} of the client's
 * configuration ({@link #PID}), which {@link RtrsClientComponent} takes in place (new paths
 * use it, nothing restarts) and which stays across restarts, as its file would.
 */
final class ClientAdmin implements RtrsClientAdmin {
    static final String PID = "io.rnbd.rtrs.client";
    private static final String ANY_LOCATION = "?";

    private final RtrsClientAdmin client;
    private final Supplier<ConfigurationAdmin> configAdmin;

    /** @param configAdmin the ConfigAdmin service while there is one, else null */
    ClientAdmin(RtrsClientAdmin client, Supplier<ConfigurationAdmin> configAdmin) {
        this.client = client;
        this.configAdmin = configAdmin;
    }

    @Override
    public synchronized String setAuthMethod(String method) throws IOException {
        String value = Authenticators.configured(method, client.authenticators().stream().map(Provider::name)
                .toList());
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
        return "client: new paths authenticate with " + (value.isEmpty() ? "the best-ranked authenticator present"
                : value);
    }

    // the running client, as it is

    @Override
    public List<RtrsClientSessionInfo> sessions() {
        return client.sessions();
    }

    @Override
    public Optional<RtrsClientSessionInfo> session(String name) {
        return client.session(name);
    }

    @Override
    public void addPath(String session, String path) {
        client.addPath(session, path);
    }

    @Override
    public void removePath(String session, String path) {
        client.removePath(session, path);
    }

    @Override
    public void reconnectPath(String session, String path) {
        client.reconnectPath(session, path);
    }

    @Override
    public void disconnectPath(String session, String path) {
        client.disconnectPath(session, path);
    }

    @Override
    public void setMpPolicy(String session, String policy) {
        client.setMpPolicy(session, policy);
    }

    @Override
    public List<Provider> mpPolicies() {
        return client.mpPolicies();
    }

    @Override
    public List<Provider> authenticators() {
        return client.authenticators();
    }

    @Override
    public String authMethod() {
        return client.authMethod();
    }

    @Override
    public void setMaxReconnectAttempts(String session, int attempts) {
        client.setMaxReconnectAttempts(session, attempts);
    }

    @Override
    public void resetStats(String session) {
        client.resetStats(session);
    }
}
