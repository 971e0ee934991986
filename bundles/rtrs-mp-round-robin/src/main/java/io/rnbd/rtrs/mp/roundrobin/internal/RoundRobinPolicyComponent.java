package io.rnbd.rtrs.mp.roundrobin.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import org.osgi.service.component.annotations.Component;

/** Registers the policy; sessions select it by {@code rtrs.mp.policy=round-robin}. */
@Component(service = MultipathPolicy.class,
        property = MultipathPolicy.PROP_NAME + "=" + MultipathPolicy.ROUND_ROBIN)
public class RoundRobinPolicyComponent extends RoundRobinPolicy {
}
