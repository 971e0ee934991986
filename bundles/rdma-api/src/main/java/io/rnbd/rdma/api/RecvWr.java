package io.rnbd.rdma.api;

import java.util.List;

/** A receive queue work request: where the next incoming SEND lands. */
public record RecvWr(long wrId, List<Sge> sgl) {
    public RecvWr {
        sgl = List.copyOf(sgl);
    }

    public long totalLength() {
        long n = 0;
        for (Sge s : sgl) {
            n += s.length();
        }
        return n;
    }
}
