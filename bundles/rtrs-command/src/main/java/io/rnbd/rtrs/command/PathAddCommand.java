package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsClientAdmin;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code rtrs:path-add SESSION PATH}. */
@Service
@Command(scope = "rtrs", name = "path-add", description = "Add a path to an RTRS client session (sysfs add_path); it starts connecting")
public class PathAddCommand extends PathCommand {
    @Override
    void apply(RtrsClientAdmin admin, String session, String path) {
        admin.addPath(session, path);
    }

    @Override
    String done() {
        return "path added";
    }
}
