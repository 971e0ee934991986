package io.rnbd.rtrs.mp.minlatency.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import org.osgi.service.component.annotations.Component;

/** Registers the policy; sessions select it by {@code rtrs.mp.policy=min-latency}. */
@Component(service = MultipathPolicy.class,
        property = MultipathPolicy.PROP_NAME + "=" + MultipathPolicy.MIN_LATENCY)
public class MinLatencyPolicyComponent extends MinLatencyPolicy {
}
