package io.rnbd.rtrs.auth.none.internal;

import io.rnbd.rtrs.api.Authenticator;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Registers the no-auth authenticator; sessions select it by {@code rtrs.auth=none}. */
@Component(service = Authenticator.class,
        property = Authenticator.PROP_METHOD + "=" + NoneAuthenticator.METHOD)
public class NoneAuthenticatorComponent extends NoneAuthenticator {
    private static final Logger LOG = LoggerFactory.getLogger(NoneAuthenticatorComponent.class);

    @Activate
    public NoneAuthenticatorComponent() {
        LOG.info("RTRS authentication 'none' available: hosts are accepted by their claimed identity");
    }
}
