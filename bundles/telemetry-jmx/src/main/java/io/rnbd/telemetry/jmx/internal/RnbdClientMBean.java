package io.rnbd.telemetry.jmx.internal;

/**
 * {@code io.rnbd:type=rnbd-client}: rnbd:map, rnbd:unmap (without --force), rnbd:remap and
 * rnbd:resize, the same {@code RnbdClientAdmin} operations the console's commands call; each
 * returns the line the console prints, or fails with it (errno first).
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
