package io.rnbd.telemetry.dashboard.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Optional;
import javax.security.auth.Subject;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.FailedLoginException;
import javax.security.auth.login.LoginException;
import javax.security.auth.spi.LoginModule;
import org.apache.karaf.jaas.boot.principal.RolePrincipal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class JaasLoginTest {
    private Configuration before;

    /** A realm of two users: karaf/karaf with role viewer, plain/plain with none. */
    public static final class TestModule implements LoginModule {
        private Subject subject;
        private CallbackHandler handler;
        private String user;

        @Override
        public void initialize(Subject subject, CallbackHandler handler, Map<String, ?> shared, Map<String, ?> options) {
            this.subject = subject;
            this.handler = handler;
        }

        @Override
        public boolean login() throws LoginException {
            NameCallback name = new NameCallback("user");
            PasswordCallback password = new PasswordCallback("password", false);
            try {
                handler.handle(new Callback[] {name, password});
            } catch (Exception e) {
                throw new LoginException(e.toString());
            }
            user = name.getName();
            String p = new String(password.getPassword());
            if (!(user.equals("karaf") && p.equals("karaf")) && !(user.equals("plain") && p.equals("plain"))) {
                throw new FailedLoginException("bad credentials");
            }
            return true;
        }

        @Override
        public boolean commit() {
            if (user.equals("karaf")) {
                subject.getPrincipals().add(new RolePrincipal("viewer"));
            }
            return true;
        }

        @Override
        public boolean abort() {
            return true;
        }

        @Override
        public boolean logout() {
            return true;
        }
    }

    @BeforeEach
    void realm() {
        before = Configuration.getConfiguration();
        Configuration.setConfiguration(new Configuration() {
            @Override
            public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
                return name.equals("test") ? new AppConfigurationEntry[] {new AppConfigurationEntry(
                        TestModule.class.getName(), AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, Map.of())}
                        : null;
            }
        });
    }

    @AfterEach
    void restore() {
        Configuration.setConfiguration(before);
    }

    @Test
    void goodCredentialsWithTheRoleLogIn() {
        assertEquals(Optional.of("karaf"), new JaasLogin("test", "viewer").authenticate("karaf", "karaf".toCharArray()));
    }

    @Test
    void wrongPasswordsMissingRolesAndUnknownRealmsDoNot() {
        JaasLogin viewer = new JaasLogin("test", "viewer");
        assertEquals(Optional.empty(), viewer.authenticate("karaf", "wrong".toCharArray()));
        assertEquals(Optional.empty(), viewer.authenticate("plain", "plain".toCharArray()), "no viewer role");
        assertEquals(Optional.empty(), new JaasLogin("test", "admin").authenticate("karaf", "karaf".toCharArray()));
        assertEquals(Optional.empty(), new JaasLogin("nope", "").authenticate("karaf", "karaf".toCharArray()));
        assertEquals(Optional.empty(), viewer.authenticate("", "x".toCharArray()));
        assertEquals(Optional.empty(), viewer.authenticate("karaf", null));
    }

    @Test
    void anEmptyRoleLetsAnyUserOfTheRealmIn() {
        assertEquals(Optional.of("plain"), new JaasLogin("test", "").authenticate("plain", "plain".toCharArray()));
    }
}
