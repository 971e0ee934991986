package io.rnbd.nbd.gateway.internal.osgi;

import io.rnbd.nbd.gateway.internal.DeviceExports;
import io.rnbd.nbd.gateway.internal.NbdServer;
import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.nbd.gateway.internal.NbdServerStats;
import io.rnbd.rnbd.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves every mapped {@link RemoteBlockDevice} over NBD, one export per device, named after it;
 * registered as {@link NbdGatewayAdmin} for JMX, /metrics and the dashboard.
 */
@Component(service = NbdGatewayAdmin.class, immediate = true, configurationPid = NbdGatewayComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = NbdGatewayComponent.Config.class)
public final class NbdGatewayComponent implements NbdGatewayAdmin {
    static final String PID = "io.rnbd.nbd.gateway";
    private static final Logger LOG = LoggerFactory.getLogger(NbdGatewayComponent.class);

    @ObjectClassDefinition(id = PID, name = "RNBD NBD gateway",
            description = "Serves mapped RNBD devices over the NBD protocol for qemu-img, nbdcopy, fio, nbd-client")
    public @interface Config {
        @AttributeDefinition(name = "Address",
                description = "IP address the NBD server listens on; keep it on loopback, NBD has no authentication")
        String address() default "127.0.0.1";

        @AttributeDefinition(name = "Port", description = "TCP port (10809 is NBD's IANA port; 0 = any free port)")
        int port() default 10809;

        @AttributeDefinition(name = "Unix socket",
                description = "Also listen on this Unix domain socket path (empty = no Unix socket)")
        String unix_socket() default "";
    }

    private final DeviceExports exports = new DeviceExports();
    private final NbdServer server;

    @Activate
    public NbdGatewayComponent(Config config) {
        if (config.port() < 0 || config.port() > 65535) {
            throw new IllegalArgumentException("port must be 0-65535, not " + config.port());
        }
        if (config.address() == null || config.address().isBlank()) {
            throw new IllegalArgumentException("address must not be empty");
        }
        InetSocketAddress tcp = new InetSocketAddress(config.address().trim(), config.port());
        if (tcp.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve address '" + config.address() + "'");
        }
        String unix = config.unix_socket() == null ? "" : config.unix_socket().trim();
        try {
            server = new NbdServer(NbdServerConfig.of(tcp, unix.isEmpty() ? null : Path.of(unix)), exports);
        } catch (IOException e) {
            throw new UncheckedIOException("NBD gateway cannot listen on " + tcp
                    + (unix.isEmpty() ? "" : " / " + unix) + ": " + e.getMessage(), e);
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindDevice(RemoteBlockDevice device, Map<String, Object> props) {
        String name = nameOf(device, props);
        if (!exports.add(name, device)) {
            LOG.warn("NBD gateway: a device named '{}' is already exported, ignoring the second one", name);
        }
    }

    void unbindDevice(RemoteBlockDevice device, Map<String, Object> props) {
        if (exports.remove(nameOf(device, props), device)) {
            server.exportRemoved(device);
        }
    }

    private static String nameOf(RemoteBlockDevice device, Map<String, Object> props) {
        Object n = props.get(RemoteBlockDevice.PROP_NAME);
        return n != null ? n.toString() : device.name();
    }

    @Override
    public GatewayInfo info() {
        InetSocketAddress tcp = server.tcpAddress();
        Path unix = server.unixSocket();
        NbdServerStats.Snapshot s = server.stats().snapshot();
        return new GatewayInfo(tcp == null ? "" : tcp.getAddress().getHostAddress() + ":" + tcp.getPort(),
                unix == null ? "" : unix.toString(), List.copyOf(exports.names()), server.connectionCount(),
                new GatewayStats(s.connections(), s.refused(), s.handshakeTimeouts(), s.dropped(), s.requests(),
                        s.errors(), s.bytesRead(), s.bytesWritten()));
    }

    /** The bound TCP address (tests configure port 0). */
    InetSocketAddress tcpAddress() {
        return server.tcpAddress();
    }

    @Deactivate
    void deactivate() {
        server.close();
    }
}
