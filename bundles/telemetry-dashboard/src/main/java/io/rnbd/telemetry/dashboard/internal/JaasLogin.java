package io.rnbd.telemetry.dashboard.internal;

import java.security.Principal;
import java.util.Optional;
import javax.security.auth.Subject;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.LoginContext;
import javax.security.auth.login.LoginException;

/**
 * A user name and password checked against a JAAS realm (Karaf's {@code karaf} realm:
 * etc/users.properties unless the operator configured LDAP or another module), then the
 * role. Roles are Karaf's RolePrincipal, matched by class name as Karaf's own web console
 * does, so this bundle needs none of Karaf's JAAS classes.
 */
public final class JaasLogin implements Login {
    static final String ROLE_PRINCIPAL = "org.apache.karaf.jaas.boot.principal.RolePrincipal";

    private final String realm;
    private final String role;

    public JaasLogin(String realm, String role) {
        this.realm = realm;
        this.role = role;
    }

    @Override
    public Optional<String> authenticate(String user, char[] password) {
        if (user == null || user.isEmpty() || password == null) {
            return Optional.empty();
        }
        Subject subject = new Subject();
        try {
            LoginContext context = new LoginContext(realm, subject, callbacks -> {
                for (var callback : callbacks) {
                    if (callback instanceof NameCallback n) {
                        n.setName(user);
                    } else if (callback instanceof PasswordCallback p) {
                        p.setPassword(password);
                    } else {
                        throw new UnsupportedCallbackException(callback);
                    }
                }
            });
            context.login();
        } catch (LoginException e) {
            return Optional.empty();
        }
        return hasRole(subject) ? Optional.of(user) : Optional.empty();
    }

    private boolean hasRole(Subject subject) {
        if (role.isEmpty()) {
            return true;
        }
        for (Principal p : subject.getPrincipals()) {
            if (p.getClass().getName().equals(ROLE_PRINCIPAL) && p.getName().equals(role)) {
                return true;
            }
        }
        return false;
    }
}
