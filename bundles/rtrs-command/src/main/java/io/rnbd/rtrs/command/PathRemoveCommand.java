package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:path-remove SESSION PATH}. */
@Service
@Command(scope = "rtrs", name = "path-remove", description = "Disconnect a path and remove it from its session (sysfs remove_path); its inflight IO fails over")
public class PathRemoveCommand extends PathCommand {
    @Override
    void apply(RtrsClientAdmin admin, String session, String path) {
        admin.removePath(session, path);
    }

    @Override
    String done() {
        return "path removed";
    }
}
