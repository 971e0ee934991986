package io.rnbd.rnbd.command;

import io.rnbd.common.Errno;
import io.rnbd.common.Provider;
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
    /** As a server with the appliance's two default backends and none of a user's. */
    final List<Provider> backends = new ArrayList<>(List.of(
            new Provider("file", "rnbd-backend-file", "0.1.0.SNAPSHOT", 61, 0),
            new Provider("memory", "rnbd-backend-memory", "0.1.0.SNAPSHOT", 62, 0)));

    @Override
    public List<Provider> backends() {
        return List.copyOf(backends);
    }

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

    /** As the memory backend: at most 64t. */
    @Override
    public void validateExport(String backend, Map<String, String> params, boolean readOnly) throws IOException {
        calls.add("validate " + backend + " " + params);
        String size = params.get("size");
        if ("memory".equals(backend) && size != null && Long.parseLong(size) > (64L << 40)) {
            throw new IOException("memory backend: size=" + size + " exceeds the limit of 64t");
        }
    }

    /** As rnbd-server: a shrink is refused while the export is open. */
    @Override
    public long resizeExport(String export, long bytes) throws IOException {
        calls.add("resize " + export + " " + bytes);
        ExportInfo e = exports.get(export);
        if (e == null) {
            throw new BlockIoException(Errno.ENOENT, "no export " + export);
        }
        if (bytes < e.size() && !e.openers().isEmpty()) {
            throw new BlockIoException(Errno.EBUSY, "export " + export + " is open by session "
                    + e.openers().get(0).session() + " with " + e.size() + " bytes mapped: shrinking to " + bytes
                    + " would fail their IO beyond it (unmap them first)");
        }
        put(new ExportInfo(e.name(), e.backend(), bytes, e.state(), e.readOnly(), e.openers(), e.stats(),
                e.lastError()));
        return bytes;
    }

    /** The next add/remove's failure; null: it succeeds with {@link #answer}. */
    IOException failOp;
    String answer = "done";

    @Override
    public ExportResult addExport(ExportRequest r) throws IOException {
        calls.add("addExport " + r);
        if (failOp != null) {
            throw failOp;
        }
        return new ExportResult(null, answer);
    }

    @Override
    public ExportResult removeExport(String name, boolean force) throws IOException {
        calls.add("removeExport " + name + " " + force);
        if (failOp != null) {
            throw failOp;
        }
        return new ExportResult(null, answer);
    }
}
