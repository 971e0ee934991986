package io.rnbd.nbd.gateway.internal.osgi;

import io.rnbd.nbd.gateway.internal.DeviceExports;
import io.rnbd.nbd.gateway.internal.NbdServer;
import io.rnbd.nbd.gateway.internal.NbdServerConfig;
import io.rnbd.nbd.gateway.internal.NbdServerStats;
import io.rnbd.nbd.gateway.internal.TlsPolicy;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
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
import org.osgi.service.metatype.annotations.AttributeType;
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
                description = "IP address the NBD server listens on; beyond loopback only with tls=require (NBD has no"
                        + " authentication of its own)")
        String address() default "127.0.0.1";

        @AttributeDefinition(name = "Port", description = "TCP port (10809 is NBD's IANA port; 0 = any free port)")
        int port() default 10809;

        @AttributeDefinition(name = "Unix socket",
                description = "Also listen on this Unix domain socket path (empty = no Unix socket)")
        String unix_socket() default "";

        @AttributeDefinition(name = "Handshake timeout (s)",
                description = "A client that has not finished the NBD handshake, TLS included, within this is dropped")
        int handshake_timeout_sec() default 30;

        @AttributeDefinition(name = "Idle timeout (s)",
                description = "A connection with nothing in flight that sends no request for this long is closed,"
                        + " so idle clients cannot fill the 128-connection cap; 0 = never")
        int idle_timeout_sec() default 600;

        @AttributeDefinition(name = "Poll (µs)",
                description = "The longest a connection's reader busy-polls its socket for the next request before it"
                        + " sleeps (0-1000; 0 = never), as the soft RDMA devices' poll.usec: the window adapts, opening"
                        + " while a client sends its next request soon after each reply (depth 1) and closing when it"
                        + " pauses, so an idle connection never polls; a poll begins only with few requests in flight"
                        + " and a CPU spare. Cuts depth-1 latency. Default 100")
        int poll_usec() default NbdServerConfig.DEFAULT_POLL_USEC;

        @AttributeDefinition(name = "TLS",
                description = "NBD_OPT_STARTTLS on the TCP listener, as nbdkit --tls: off, on (offered), require."
                        + " Required to listen on any address beyond loopback")
        String tls() default "off";

        @AttributeDefinition(name = "TLS certificates directory",
                description = "As nbdkit --tls-certificates: server-cert.pem, server-key.pem (PKCS#8), ca-cert.pem"
                        + " (for tls.verify.peer)")
        String tls_certificates() default "";

        @AttributeDefinition(name = "TLS key store",
                description = "Instead of tls.certificates: a PKCS#12 (.p12) or JKS (.jks) key store with the"
                        + " server's key and certificate chain")
        String tls_keystore() default "";

        @AttributeDefinition(name = "TLS key store password", type = AttributeType.PASSWORD,
                description = "Password of tls.keystore (and of its key)")
        String tls_keystore_password() default "";

        @AttributeDefinition(name = "TLS verify peer",
                description = "Clients must present a certificate signed by ca-cert.pem (or a trusted entry of"
                        + " tls.keystore)")
        boolean tls_verify_peer() default false;

        @AttributeDefinition(name = "TLS PSK file",
                description = "Not supported (Java's TLS has no TLS-PSK): setting it makes the gateway refuse to start")
        String tls_psk() default "";
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
        if (config.handshake_timeout_sec() < 1 || config.idle_timeout_sec() < 0) {
            throw new IllegalArgumentException("handshake.timeout.sec must be >= 1 and idle.timeout.sec >= 0");
        }
        NbdServerConfig cfg;
        try {
            TlsPolicy tls = TlsPolicy.load(TlsPolicy.parseMode(config.tls()), pathOrNull(config.tls_certificates()),
                    pathOrNull(config.tls_keystore()), config.tls_keystore_password() == null ? null
                            : config.tls_keystore_password().toCharArray(), pathOrNull(config.tls_psk()),
                    config.tls_verify_peer());
            cfg = NbdServerConfig.of(tcp, unix.isEmpty() ? null : Path.of(unix))
                    .withTimeouts(Duration.ofSeconds(config.handshake_timeout_sec()),
                            Duration.ofSeconds(config.idle_timeout_sec()))
                    .withTls(tls)
                    .withPollUsec(config.poll_usec());
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            // Logged here too: a DS activation failure is otherwise easy to miss on the console.
            LOG.error("NBD gateway not started: {}", e.getMessage());
            throw new IllegalArgumentException("NBD gateway not started: " + e.getMessage(), e);
        }
        try {
            server = new NbdServer(cfg, exports);
        } catch (IOException e) {
            throw new UncheckedIOException("NBD gateway cannot listen on " + tcp
                    + (unix.isEmpty() ? "" : " / " + unix) + ": " + e.getMessage(), e);
        }
    }

    private static Path pathOrNull(String s) {
        return s == null || s.isBlank() ? null : Path.of(s.trim());
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
                        s.errors(), s.bytesRead(), s.bytesWritten()), server.hostTuning());
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
