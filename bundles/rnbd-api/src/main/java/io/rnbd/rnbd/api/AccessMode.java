package io.rnbd.rnbd.api;

/** How a client opens an export (RNBD_ACCESS_*). */
public enum AccessMode {
    /** Any number of readers. */
    RO(0),
    /** One writer. */
    RW(1),
    /** A second writer, allowed while a device migrates between clients. */
    MIGRATION(2);

    private final int wire;

    AccessMode(int wire) {
        this.wire = wire;
    }

    public int wire() {
        return wire;
    }

    public static AccessMode fromWire(int v) {
        for (AccessMode m : values()) {
            if (m.wire == v) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown access mode " + v);
    }
}
