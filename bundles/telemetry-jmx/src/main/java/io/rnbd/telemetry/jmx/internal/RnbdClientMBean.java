package io.rnbd.telemetry.jmx.internal;

/**
 * {@code io.rnbd:type=rnbd-client}: rnbd:map, rnbd:unmap (without --force), rnbd:remap and
 * rnbd:resize, run as the console runs them; each returns the console's answer.
 */
public interface RnbdClientMBean {
    String[] getDevices();

    /** Map {@code export} over {@code session} as {@code device}; mode RO, RW (default when empty) or MIGRATION. */
    String map(String device, String session, String export, String mode);

    /** Refused while IO is in flight or users hold the device (there is no forced unmap here). */
    String unmap(String device);

    String remap(String device);

    String resize(String device);
}
