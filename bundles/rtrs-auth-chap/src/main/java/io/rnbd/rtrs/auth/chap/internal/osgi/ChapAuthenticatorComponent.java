package io.rnbd.rtrs.auth.chap.internal.osgi;

import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import io.rnbd.rtrs.auth.chap.internal.ChapAuthenticator;
import io.rnbd.rtrs.auth.chap.internal.ChapConfig;
import io.rnbd.rtrs.auth.chap.internal.ChapKeyAdminImpl;
import io.rnbd.rtrs.auth.chap.internal.ChapKeyException;
import io.rnbd.rtrs.auth.chap.internal.ChapKeyStore;
import io.rnbd.rtrs.auth.chap.internal.ChapSettings;
import io.rnbd.rtrs.auth.chap.internal.HostKeys;
import io.rnbd.rtrs.auth.chap.internal.KeyFile;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the CHAP {@link Authenticator} ({@code rtrs.auth=chap}) and its {@link ChapKeyAdmin}.
 * A configuration update rotates keys and settings in place (no re-registration), so
 * sessions keep their reference; an invalid update is logged and the previous keys stay.
 *
 * <p>The services are registered by hand, with {@code rtrs.auth} as their only property:
 * DS would copy every configuration property, {@code host.<id>} secrets included, into the
 * service properties, where any console user could read them.
 */
// Registered by hand, so DS does not declare it: said here, so that a bundle requiring it
// resolves where Karaf enforces service requirements.
@Capability(namespace = "osgi.service", attribute = {"objectClass:List<String>=\"io.rnbd.rtrs.api.Authenticator,"
        + "io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin\"", "rtrs.auth=chap"}, uses = {Authenticator.class, ChapKeyAdmin.class})
@Component(configurationPid = ChapAuthenticatorComponent.PID, immediate = true, service = {})
@Designate(ocd = ChapAuthenticatorComponent.Config.class)
public class ChapAuthenticatorComponent implements Authenticator, ChapKeyAdmin {
    static final String PID = "io.rnbd.rtrs.auth.chap";
    private static final Logger LOG = LoggerFactory.getLogger(ChapAuthenticatorComponent.class);

    @ObjectClassDefinition(name = "RTRS CHAP authentication",
            description = "DH-HMAC-CHAP-like authentication of RTRS sessions. Keys: entries host.<hostid>=DHHC-1:... "
                    + "(and ctrl.<hostid>=DHHC-1:... for bidirectional auth) here or in the keys file.")
    @interface Config {
        @AttributeDefinition(name = "Target id",
                description = "This node's identity as a target, bound into every response; empty = the host name")
        String target_id() default "";

        @AttributeDefinition(name = "Hashes",
                description = "HMAC hashes offered as host and accepted, in preference order, as target")
        String hashes() default ChapSettings.DEFAULT_HASHES;

        @AttributeDefinition(name = "DH groups",
                description = "Diffie-Hellman groups offered as host and accepted, in preference order, as target "
                        + "(null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192)")
        String dhgroups() default ChapSettings.DEFAULT_DH_GROUPS;

        @AttributeDefinition(name = "Keys file",
                description = "File of host.<id>=/ctrl.<id>= secrets, mode 600 (refused otherwise); written by the "
                        + "key admin commands; empty = none")
        String keys_file() default "${karaf.etc}/rnbd-chap.keys";
    }

    private final ChapKeyStore store = new ChapKeyStore();
    private final ChapAuthenticator authenticator;
    private final ServiceRegistration<?> registration;
    private volatile ChapKeyAdmin admin;

    @Activate
    public ChapAuthenticatorComponent(BundleContext context, Config config, Map<String, Object> props) {
        ChapConfig c;
        try {
            c = parse(config, props);
            apply(c);
        } catch (IllegalArgumentException e) {
            LOG.error("CHAP authenticator not started: {}", e.getMessage());
            throw e;
        }
        authenticator = new ChapAuthenticator(store, new SecureRandom(), c.settings());
        registration = context.registerService(
                new String[] {Authenticator.class.getName(), ChapKeyAdmin.class.getName()}, this,
                new Hashtable<>(Map.of(Authenticator.PROP_METHOD, ChapAuthenticator.METHOD)));
        LOG.info("CHAP authenticator active: target.id={}, {}", c.settings().targetId(), store);
    }

    @Deactivate
    void deactivate() {
        try {
            registration.unregister();
        } catch (IllegalStateException alreadyGone) {
            // the framework unregisters a stopping bundle's services itself
        }
    }

    @Modified
    void modified(Config config, Map<String, Object> props) {
        try {
            ChapConfig c = parse(config, props);
            apply(c);
            authenticator.update(c.settings());
            LOG.info("CHAP configuration updated: target.id={}, {}", c.settings().targetId(), store);
        } catch (IllegalArgumentException e) {
            LOG.error("CHAP configuration update rejected, previous keys stay in force: {}", e.getMessage());
        }
    }

    private static ChapConfig parse(Config config, Map<String, Object> props) {
        String targetId = config.target_id().isBlank() ? localHostName() : config.target_id().trim();
        ChapConfig c = ChapConfig.parse(targetId, config.hashes(), config.dhgroups(), config.keys_file(), props,
                System::getProperty);
        if (c.keysFile() == null && !config.keys_file().isBlank()) {
            LOG.info("CHAP keys.file '{}' does not resolve here; using configuration keys only", config.keys_file());
        }
        return c;
    }

    /** Loads the keys file first, so a refused file leaves the keys in force untouched. */
    private void apply(ChapConfig c) {
        KeyFile file = c.keysFile() == null ? null : new KeyFile(c.keysFile());
        Map<String, HostKeys> fileKeys = Map.of();
        if (file != null) {
            try {
                fileKeys = file.load();
            } catch (ChapKeyException | IOException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        store.setConfigKeys(c.inlineKeys());
        store.setFileKeys(fileKeys);
        admin = new ChapKeyAdminImpl(store, file);
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    @Override
    public String method() {
        return authenticator.method();
    }

    @Override
    public AuthExchange initiate(String hostId) throws AuthException {
        return authenticator.initiate(hostId);
    }

    @Override
    public AuthExchange respond() {
        return authenticator.respond();
    }

    @Override
    public List<ChapKeyInfo> list() {
        return admin.list();
    }

    @Override
    public void put(String hostId, String hostSecret, String ctrlSecret) throws IOException {
        admin.put(hostId, hostSecret, ctrlSecret);
    }

    @Override
    public boolean remove(String hostId) throws IOException {
        return admin.remove(hostId);
    }
}
