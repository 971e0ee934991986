package io.rnbd.rnbd.client;

/** Makes mapped devices visible (the OSGi glue registers them as services). */
public interface DevicePublisher {
    /** First successful OPEN of the device. */
    void publish(RnbdClientDevice device);

    /** The device is unmapped; called once, and only after {@link #publish}. */
    void withdraw(RnbdClientDevice device);

    DevicePublisher NONE = new DevicePublisher() {
        @Override
        public void publish(RnbdClientDevice device) {
        }

        @Override
        public void withdraw(RnbdClientDevice device) {
        }
    };
}
