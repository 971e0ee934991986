package io.rnbd.rdma.core.internal.osgi;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.rdma.core.internal.DeviceRegistry;

import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

import java.util.List;

/**
 * Tracks every {@link RdmaDevice} and {@link IbClient} service and feeds them to the
 * {@link DeviceRegistry}. DS unbinds during service unregistration, so a provider's
 * unregister (or a client's deactivation) returns only after the matching
 * {@code remove} calls have finished.
 */
@Component(immediate = true, service = RdmaAdmin.class)
public final class DeviceRegistryComponent implements RdmaAdmin {
    private final DeviceRegistry registry = new DeviceRegistry();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindDevice")
    void bindDevice(RdmaDevice device) {
        registry.addDevice(device);
    }

    void unbindDevice(RdmaDevice device) {
        registry.removeDevice(device);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindClient")
    void bindClient(IbClient client) {
        registry.addClient(client);
    }

    void unbindClient(IbClient client) {
        registry.removeClient(client);
    }

    @Override
    public List<RdmaDeviceInfo> devices() {
        return registry.devices();
    }

    @Deactivate
    void deactivate() {
        registry.close();
    }
}
