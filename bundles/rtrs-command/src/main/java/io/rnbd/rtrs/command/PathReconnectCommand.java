package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:path-reconnect SESSION PATH}. */
@Service
@Command(scope = "rtrs", name = "path-reconnect", description = "Drop a path's connections and connect again at once (sysfs reconnect)")
public class PathReconnectCommand extends PathCommand {
    @Override
    void apply(RtrsClientAdmin admin, String session, String path) {
        admin.reconnectPath(session, path);
    }

    @Override
    String done() {
        return "path reconnecting";
    }
}
