package io.rnbd.rnbd.client.internal.osgi;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import java.io.IOException;
import java.util.Locale;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A mapping kept in ConfigAdmin, so it comes back after a restart. */
@Component(service = {}, configurationPid = MapComponent.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
        immediate = true)
@Designate(ocd = MapComponent.Config.class, factory = true)
public final class MapComponent {
    static final String PID = "io.rnbd.client.map";
    private static final Logger LOG = LoggerFactory.getLogger(MapComponent.class);

    @ObjectClassDefinition(name = "RNBD mapping",
            description = "Maps a server's export as a local RemoteBlockDevice (kernel map_device)")
    public @interface Config {
        @AttributeDefinition(name = "Device name", description = "Local name of the mapped device (rnbd.device property)")
        String device_name() default "rnbd0";

        @AttributeDefinition(name = "Session name", description = "RTRS client session (rtrs.session) to map over; "
                + "several, comma separated, one per server, for an export those servers serve together (ha = true "
                + "on each): IO goes to the one that holds the storage and moves when it is lost")
        String session_name() default "";

        @AttributeDefinition(name = "Export name", description = "Name of the export on the server")
        String export_name() default "";

        @AttributeDefinition(name = "Access mode", description = "RO, RW or MIGRATION")
        String access_mode() default "RW";
    }

    private final RnbdClientAdmin admin;
    private final String device;

    @Activate
    public MapComponent(@Reference RnbdClientAdmin admin, Config config) throws IOException {
        if (config.session_name().isBlank() || config.export_name().isBlank() || config.device_name().isBlank()) {
            throw new IllegalArgumentException(PID + ": device.name, session.name and export.name are required");
        }
        AccessMode mode;
        try {
            mode = AccessMode.valueOf(config.access_mode().trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PID + ": access.mode must be RO, RW or MIGRATION, not '"
                    + config.access_mode() + "'");
        }
        this.admin = admin;
        this.device = config.device_name().trim();
        admin.map(device, config.session_name().trim(), config.export_name().trim(), mode)
                .whenComplete((d, t) -> {
                    if (t != null) {
                        LOG.warn("mapping {} failed: {}", device, t.getMessage());
                    }
                });
    }

    @Deactivate
    void deactivate() {
        try {
            admin.unmap(device, true);
        } catch (IOException e) {
            LOG.debug("unmap {}: {}", device, e.getMessage());
        }
    }
}
