package io.rnbd.rtrs.client.internal.osgi;

import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.client.internal.ClientConfig;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.rtrs.client.internal.PathAddress;
import io.rnbd.rtrs.client.internal.RtrsClient;
import io.rnbd.rtrs.proto.Rtrs;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;

/**
 * One configured session (factory PID {@code io.rnbd.rtrs.client.session}), registered as
 * an {@link RtrsClientSession} service with {@code rtrs.session=<name>}.
 */
// Registered by hand, so DS does not declare it: said here, so that a bundle requiring it
// resolves where Karaf enforces service requirements.
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=io.rnbd.rtrs.api.RtrsClientSession", uses = RtrsClientSession.class)
@Component(configurationPid = ClientSessionComponent.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
        service = {}, immediate = true)
@Designate(ocd = ClientSessionComponent.Config.class, factory = true)
public final class ClientSessionComponent {
    static final String PID = "io.rnbd.rtrs.client.session";

    @ObjectClassDefinition(name = "RTRS client session", description = "A session of paths to one RTRS server.")
    public @interface Config {
        @AttributeDefinition(name = "Session name", description = "Name the server and upper layers know the session by.")
        String session_name() default "";

        @AttributeDefinition(name = "Paths", description = "Comma-separated paths, each [src@]dst[:port] (port 1234 by default); at most 128.")
        String paths() default "";

        @AttributeDefinition(name = "Multipath policy", description = "round-robin, min-inflight or min-latency; falls back to the best-ranked policy present, then built-in round-robin.")
        String mp_policy() default "min-inflight";

        @AttributeDefinition(name = "Max reconnect attempts", description = "-1 = forever, else 0..9999 failed attempts before a path gives up.")
        int max_reconnect_attempts() default -1;

        @AttributeDefinition(name = "Reconnect delay (s)", description = "Base delay before reconnecting a path; +1 s per failed attempt, spread by +/-50 % jitter.")
        int reconnect_delay_sec() default 10;

        @AttributeDefinition(name = "IO timeout (ms)", description = "How long IO waits while no path is connected "
                + "(dm-multipath's queue_if_no_path with no_path_retry): past it each waiting request fails with EIO and "
                + "the log says why. The default minute outlasts every hot swap and three reconnect rounds at the default "
                + "delay; 0 = fail at once, as Linux RTRS does.")
        long io_timeout_ms() default ClientConfig.DEFAULT_IO_TIMEOUT_MS;

        @AttributeDefinition(name = "Request timeout (ms)", description = "A request unanswered this long on a connected "
                + "path fails that path, and it and its companions go to another path (fenced where the server can), "
                + "as Linux's block layer times out a request after 30 s; 0 = never.")
        long request_timeout_ms() default 30000;

        @AttributeDefinition(name = "Connections per path", description = "IO connections per path besides the service connection; 0 = number of CPUs.")
        int cons_per_path() default 0;

        @AttributeDefinition(name = "Host id", description = "Identity presented to the server's authenticator; empty = this host's name.")
        String host_id() default "";

        @AttributeDefinition(name = "Heartbeat interval (ms)", description = "Period of heartbeats on each path's service connection.")
        long hb_interval_ms() default 5000;

        @AttributeDefinition(name = "Heartbeats missed", description = "Missed heartbeats after which a path is declared dead.")
        int hb_missed_max() default 5;
    }

    private final RtrsClient client;
    private final ClientSession session;
    private final ServiceRegistration<RtrsClientSession> registration;

    /** @param client the bundle's one client, registered by {@link RtrsClientComponent} */
    @Activate
    public ClientSessionComponent(BundleContext context, Config cfg, @Reference RtrsClient client) {
        this.client = client;
        this.session = client.open(toConfig(cfg));
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(RtrsClientSession.PROP_SESSION, session.name());
        this.registration = context.registerService(RtrsClientSession.class, session, props);
    }

    static ClientConfig toConfig(Config c) {
        List<PathAddress> paths = new ArrayList<>();
        for (String p : c.paths().split(",")) {
            if (!p.isBlank()) {
                paths.add(PathAddress.parse(p, Rtrs.DEFAULT_PORT));
            }
        }
        if (c.reconnect_delay_sec() < 0 || c.reconnect_delay_sec() > 3600) {
            throw new IllegalArgumentException("reconnect.delay.sec must be 0..3600");
        }
        ClientConfig d = ClientConfig.of(c.session_name(), paths);
        return new ClientConfig(c.session_name(), paths, c.mp_policy(), c.max_reconnect_attempts(),
                c.reconnect_delay_sec() * 1000, 1000, c.io_timeout_ms(), c.cons_per_path(),
                c.host_id().isBlank() ? d.hostId() : c.host_id(), c.hb_interval_ms(), c.hb_missed_max(),
                c.request_timeout_ms());
    }

    @Deactivate
    void deactivate() {
        registration.unregister();
        client.close(session);
    }
}
