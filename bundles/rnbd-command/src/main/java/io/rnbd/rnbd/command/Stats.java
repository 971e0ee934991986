package io.rnbd.rnbd.command;

import io.rnbd.command.support.Json;
import io.rnbd.rnbd.api.BlockIoStats;
import java.util.Map;

final class Stats {
    private Stats() {
    }

    static BlockIoStats orZero(BlockIoStats s) {
        return s == null ? BlockIoStats.ZERO : s;
    }

    static Map<String, Object> json(BlockIoStats s) {
        BlockIoStats st = orZero(s);
        return Json.obj("reads", st.reads(), "read_bytes", st.readBytes(), "writes", st.writes(),
                "write_bytes", st.writeBytes(), "errors", st.errors(), "unknown", st.unknown(),
                "inflight", st.inflight());
    }
}
