package io.rnbd.rnbd.client.internal;

import io.rnbd.rnbd.api.RemoteBlockDevice;

/**
 * Makes mapped devices visible (the OSGi glue registers them as services): an
 * {@link RnbdClientDevice} over one server, or an {@link RnbdHaDevice} over several (whose
 * legs are never published).
 */
public interface DevicePublisher {
    /** First successful OPEN of the device (over several servers: the first time one is active). */
    void publish(RemoteBlockDevice device);

    /** The device is unmapped; called once, and only after {@link #publish}. */
    void withdraw(RemoteBlockDevice device);

    DevicePublisher NONE = new DevicePublisher() {
        @Override
        public void publish(RemoteBlockDevice device) {
        }

        @Override
        public void withdraw(RemoteBlockDevice device) {
        }
    };
}
