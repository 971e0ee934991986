package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:path-disconnect SESSION PATH}. */
@Service
@Command(scope = "rtrs", name = "path-disconnect", description = "Close a path's connections and keep it down until path-reconnect (sysfs disconnect)")
public class PathDisconnectCommand extends PathCommand {
    @Override
    void apply(RtrsClientAdmin admin, String session, String path) {
        admin.disconnectPath(session, path);
    }

    @Override
    String done() {
        return "path disconnected";
    }
}
