package io.rnbd.telemetry.dashboard.internal;

import java.util.Optional;

/** Who may look: the user's name when the credentials are good and the role is held. */
@FunctionalInterface
public interface Login {
    Optional<String> authenticate(String user, char[] password);
}
