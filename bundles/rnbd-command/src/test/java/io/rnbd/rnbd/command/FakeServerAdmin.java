package io.rnbd.rnbd.command;

import io.rnbd.rdma.api.Errno;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

final class FakeServerAdmin implements RnbdServerAdmin {
    final Map<String, ExportInfo> exports = java.util.Collections.synchronizedMap(new TreeMap<>());
    final List<String> calls = new ArrayList<>();

    FakeServerAdmin put(ExportInfo e) {
        exports.put(e.name(), e);
        return this;
    }

    @Override
    public List<ExportInfo> exports() {
        synchronized (exports) {
            return List.copyOf(exports.values());
        }
    }

    @Override
    public void forceClose(String export, String session) throws IOException {
        calls.add("force-close " + export + " " + session);
        if (session.equals("stuck")) {
            throw new BlockIoException(Errno.EIO, "close of " + export + " failed");
        }
    }

    @Override
    public void resetStats(String export) {
        calls.add("reset " + export);
    }
}
