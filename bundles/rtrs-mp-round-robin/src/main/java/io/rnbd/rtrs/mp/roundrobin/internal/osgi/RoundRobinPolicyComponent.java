package io.rnbd.rtrs.mp.roundrobin.internal.osgi;

import io.rnbd.rtrs.api.MultipathPolicy;
import io.rnbd.rtrs.mp.roundrobin.internal.RoundRobinPolicy;
import org.osgi.service.component.annotations.Component;

/**
 * Registers the policy; sessions select it by {@code rtrs.mp.policy=round-robin}. Apart from
 * {@code internal}, which rtrs-client also packs into its jar as its built-in floor: a
 * component there would register the policy from rtrs-client too.
 */
@Component(service = MultipathPolicy.class,
        property = MultipathPolicy.PROP_NAME + "=" + MultipathPolicy.ROUND_ROBIN)
public class RoundRobinPolicyComponent extends RoundRobinPolicy {
}
