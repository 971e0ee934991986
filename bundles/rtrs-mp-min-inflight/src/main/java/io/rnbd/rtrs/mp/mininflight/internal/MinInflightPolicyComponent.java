package io.rnbd.rtrs.mp.mininflight.internal;

import io.rnbd.rtrs.api.MultipathPolicy;
import org.osgi.service.component.annotations.Component;

/** Registers the policy; sessions select it by {@code rtrs.mp.policy=min-inflight}. */
@Component(service = MultipathPolicy.class,
        property = MultipathPolicy.PROP_NAME + "=" + MultipathPolicy.MIN_INFLIGHT)
public class MinInflightPolicyComponent extends MinInflightPolicy {
}
