package io.rnbd.rnbd.server.internal.osgi;

import io.rnbd.rnbd.server.internal.ExportConfig;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * One export per factory configuration; {@link RnbdServerComponent} picks these up as they
 * come and go (whiteboard inside the bundle).
 */
@Component(service = ExportComponent.class, configurationPid = ExportComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true)
@Designate(ocd = ExportComponent.Config.class, factory = true)
public final class ExportComponent {
    static final String PID = "io.rnbd.server.export";

    @ObjectClassDefinition(name = "RNBD export",
            description = "A block device served to RNBD clients; keys backend.X go to the backend as X")
    public @interface Config {
        @AttributeDefinition(name = "Name", description = "Export name (at most 254 bytes); with the default path, "
                + "what clients give in OPEN under the default search path")
        String name() default "";

        @AttributeDefinition(name = "Path", description = "Where OPEN finds the export once its device name is resolved "
                + "against the server's dev.search.path (as Linux's rnbd-server resolves it), e.g. /dev/ram0 or "
                + "/srv/hostA/disk1; empty = /<name>")
        String path() default "";

        @AttributeDefinition(name = "Backend", description = "rnbd.backend property of the BlockBackend service to use (memory, file)")
        String backend() default "memory";

        @AttributeDefinition(name = "Read only", description = "Refuse RW and MIGRATION opens (EROFS)")
        boolean read_only() default false;

        @AttributeDefinition(name = "Allowed hosts",
                description = "Comma list of host ids allowed to open, matched against the id the session's "
                        + "authenticator proved (CHAP); * = any authenticated host; empty = any client, authenticated "
                        + "or not. A client that did not authenticate (a Linux rnbd-client, or authentication off) "
                        + "never matches a non-empty list.")
        String allowed_hosts() default "";

        @AttributeDefinition(name = "Trust claimed identity",
                description = "Match allowed.hosts against a host id that was only claimed (authenticator none), "
                        + "which any client can do: only on a network where every client is trusted. Default false.")
        boolean trust_claimed_identity() default false;

        @AttributeDefinition(name = "Allowed sessions",
                description = "Comma list of session names allowed to open; empty = any. A convenience that keeps "
                        + "honest clients apart, not security: the client chooses its session name and nothing "
                        + "checks it. Use allowed.hosts to keep clients out.")
        String allowed_sessions() default "";

        @AttributeDefinition(name = "Several servers (ha)",
                description = "Other servers export the same storage (an RBD image) under this name: this one is "
                        + "a standby that takes the storage over when a client asks (its lock broken, the holder "
                        + "fenced), or the active one; docs/scale-out.md. Needs a backend that can be shared (rbd).")
        boolean ha() default false;

        @AttributeDefinition(name = "Offline wait (ms)",
                description = "How long IO waits for a missing backend (its bundle stopped, updated, not installed) "
                        + "before failing with ENODEV, logged; the default 20 s outlasts a backend's update and stays "
                        + "under the client's 30 s request timeout; 0 = fail at once")
        long offline_wait_ms() default ExportConfig.DEFAULT_OFFLINE_WAIT_MS;
    }

    private final ExportConfig config;

    @Activate
    public ExportComponent(Map<String, Object> properties) {
        this.config = ExportConfig.fromProperties(properties);
    }

    ExportConfig config() {
        return config;
    }
}
