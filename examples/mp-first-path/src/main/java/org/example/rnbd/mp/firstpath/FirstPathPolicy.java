package org.example.rnbd.mp.firstpath;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.api.PathView;
import java.util.List;
import org.osgi.service.component.annotations.Component;

/**
 * Active/passive: every request goes to the first connected path of the session (in the order
 * the paths were added), the next one only while the first is down, or when the request
 * failed on it (the session offers only the paths it has not tried yet).
 *
 * <p>A policy is a service with the property {@code rtrs.mp.policy}: the name sessions choose
 * it by ({@code mp.policy = first-path}, {@code rtrs:mp-policy SESSION first-path}). It must
 * keep no state of its own: one instance serves every session, from the session's IO threads.
 */
@Component(service = MultipathPolicy.class, property = MultipathPolicy.PROP_NAME + "=" + FirstPathPolicy.NAME)
public class FirstPathPolicy implements MultipathPolicy {
    static final String NAME = "first-path";

    @Override
    public String name() {
        return NAME;
    }

    /** @param candidates the connected paths not yet tried for this request, in a stable order; never empty */
    @Override
    public PathView select(List<? extends PathView> candidates, long sequence) {
        return candidates.get(0);
    }
}
