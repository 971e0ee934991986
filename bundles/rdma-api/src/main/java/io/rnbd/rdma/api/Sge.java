package io.rnbd.rdma.api;

/**
 * One scatter/gather entry: {@code length} bytes at {@code offset} inside a local region.
 */
public record Sge(MemoryRegion mr, int offset, int length) {
    public Sge {
        if (mr == null) {
            throw new IllegalArgumentException("sge needs a memory region");
        }
        if (offset < 0 || length < 0 || (long) offset + length > mr.length()) {
            throw new IllegalArgumentException(
                    "sge [" + offset + ", +" + length + ") outside region of " + mr.length() + " bytes");
        }
    }

    public static Sge whole(MemoryRegion mr) {
        return new Sge(mr, 0, mr.length());
    }
}
