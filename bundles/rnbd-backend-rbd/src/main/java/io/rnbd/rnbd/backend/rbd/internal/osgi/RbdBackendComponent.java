package io.rnbd.rnbd.backend.rbd.internal.osgi;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.SharedDevice;
import io.rnbd.rnbd.backend.rbd.internal.RbdBackend;
import io.rnbd.rnbd.backend.rbd.internal.RbdSettings;
import java.io.IOException;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the RBD backend as {@code rnbd.backend=rbd}, dormant or not: a dormant backend
 * fails every open with the reason, which is how the reason reaches {@code rnbd:exports}.
 * Stopping it closes every RBD device (bounded, see {@link RbdBackend#close()}).
 */
@Component(service = BlockBackend.class, immediate = true, configurationPid = RbdBackendComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        property = BlockBackend.PROP_TYPE + "=" + RbdBackend.TYPE)
@Designate(ocd = RbdBackendComponent.Config.class)
public final class RbdBackendComponent implements BlockBackend {
    static final String PID = "io.rnbd.rnbd.backend.rbd";
    private static final Logger LOG = LoggerFactory.getLogger(RbdBackendComponent.class);

    @ObjectClassDefinition(id = PID, name = "RNBD RBD backend",
            description = "Ceph RBD images as RNBD exports (an export says backend = rbd and backend.image = NAME). "
                    + "These are what every rbd export uses unless it sets backend.pool, backend.conf, backend.id, "
                    + "backend.keyring, backend.op.timeout.sec or backend.connect.timeout.sec itself")
    public @interface Config {
        @AttributeDefinition(name = "Pool", description = "Pool of the exports that give no backend.pool")
        String pool() default "rbd";

        @AttributeDefinition(name = "ceph.conf", required = false,
                description = "Path of the cluster's ceph.conf; empty = Ceph's own search ($CEPH_CONF, "
                        + "/etc/ceph/ceph.conf)")
        String conf() default "";

        @AttributeDefinition(name = "cephx user",
                description = "The cephx user the appliance connects as, without 'client.' (it needs mon 'profile rbd' "
                        + "osd 'profile rbd pool=POOL')")
        String id() default "admin";

        @AttributeDefinition(name = "Keyring", required = false,
                description = "Path of the keyring holding that user's key; empty = what ceph.conf says "
                        + "(/etc/ceph/ceph.client.USER.keyring by default)")
        String keyring() default "";

        @AttributeDefinition(name = "Operation timeout (s)",
                description = "0 = IO waits for the cluster as long as it takes (Ceph's default); N = an OSD or "
                        + "monitor request unanswered for N seconds fails with ETIMEDOUT")
        int op_timeout_sec() default 0;

        @AttributeDefinition(name = "Connect timeout (s)",
                description = "How long opening an export waits for the monitors before it fails (1-86400)")
        int connect_timeout_sec() default 10;
    }

    private final RbdBackend backend;

    @Activate
    public RbdBackendComponent(Config config) {
        this.backend = new RbdBackend(new RbdSettings(config.pool(), config.conf(), config.id(), config.keyring(),
                config.op_timeout_sec(), config.connect_timeout_sec()));
        if (backend.dormantReason() != null) {
            LOG.warn("rbd backend dormant: {}", backend.dormantReason());
        } else {
            LOG.info("rbd backend ready (librbd {})", backend.librbdVersion());
        }
    }

    @Deactivate
    void deactivate() {
        backend.close();
    }

    @Override
    public String type() {
        return backend.type();
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        return backend.open(params, readOnly);
    }

    @Override
    public SharedDevice openShared(Map<String, String> params) throws IOException {
        return backend.openShared(params);
    }

    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        backend.validate(params, readOnly);
    }
}
