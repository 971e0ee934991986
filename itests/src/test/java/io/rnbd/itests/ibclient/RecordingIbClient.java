package io.rnbd.itests.ibclient;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;

import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

/**
 * The IB client of StartOrderIT, packed into a bundle of its own (tinybundles) so that its
 * start can be ordered against the registry's and the provider's. It binds a listener on a
 * device only in {@code add} and closes it in {@code remove}, and records what happens in
 * the test's recorder (a {@code java.util.List} service with {@code itest.recorder=ibclient}),
 * lines starting with "VIOLATION" for anything the IbClient contract forbids.
 */
public final class RecordingIbClient implements BundleActivator, IbClient {
    /** System property with the port the client listens on. */
    public static final String PORT_PROPERTY = "rnbd.itest.ibclient.port";

    private final Map<String, CmListener> listeners = new ConcurrentHashMap<>();
    private volatile BundleContext context;
    private volatile boolean ready;
    private ServiceRegistration<IbClient> registration;

    @Override
    public void start(BundleContext bundleContext) {
        context = bundleContext;
        // ready before the service exists: the registry may call add while registerService runs
        ready = true;
        record("activated");
        registration = bundleContext.registerService(IbClient.class, this, new Hashtable<>());
    }

    @Override
    public void stop(BundleContext bundleContext) {
        registration.unregister();
        ready = false;
        if (!listeners.isEmpty()) {
            record("VIOLATION stopped with listeners left on " + listeners.keySet());
        }
        record("deactivated");
    }

    @Override
    public String clientName() {
        return "itest-ibclient";
    }

    @Override
    public void add(RdmaDevice device) {
        if (!ready) {
            record("VIOLATION add " + device.name() + " before the client was activated");
        }
        if (listeners.containsKey(device.name())) {
            record("VIOLATION add " + device.name() + " twice");
            return;
        }
        try {
            InetAddress address = device.addresses().get(0);
            CmListener listener = device.listen(new InetSocketAddress(address, Integer.getInteger(PORT_PROPERTY)),
                    request -> request.reject(0));
            listeners.put(device.name(), listener);
            record("add " + device.name() + " listening on " + listener.localAddress());
        } catch (RdmaException | RuntimeException e) {
            record("VIOLATION add " + device.name() + ": listen failed: " + e);
        }
    }

    @Override
    public void remove(RdmaDevice device) {
        CmListener listener = listeners.remove(device.name());
        if (listener == null) {
            record("VIOLATION remove " + device.name() + " that was never added");
            return;
        }
        listener.close();
        record("remove " + device.name());
    }

    @SuppressWarnings("unchecked")
    private void record(String event) {
        BundleContext ctx = context;
        try {
            ServiceReference<?>[] refs = ctx.getServiceReferences(List.class.getName(), "(itest.recorder=ibclient)");
            if (refs != null) {
                List<String> recorder = (List<String>) ctx.getService(refs[0]);
                recorder.add(event);
                ctx.ungetService(refs[0]);
            }
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
