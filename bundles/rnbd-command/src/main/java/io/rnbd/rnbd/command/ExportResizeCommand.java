package io.rnbd.rnbd.command;

import io.rnbd.command.support.ConsoleCommand;
import io.rnbd.command.support.Formats;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.Sizes;
import io.rnbd.rnbd.command.completers.ExportNameCompleter;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code rnbd:export-resize EXPORT SIZE}: grow (or, while nobody has it open, shrink) an
 * export's storage. Linux has no such knob (one resizes the block device itself); mapped
 * clients learn the new size as Linux's do, by asking the server (rnbd:resize, or the
 * client's periodic refresh).
 */
@Service
@Command(scope = "rnbd", name = "export-resize",
        description = "Grow or shrink an export's storage; mapped clients see it without a remap")
public class ExportResizeCommand extends ConsoleCommand {
    @Reference(optional = true)
    RnbdServerAdmin admin;

    @Argument(index = 0, name = "export", description = "Export name", required = true)
    @Completion(ExportNameCompleter.class)
    String export;

    @Argument(index = 1, name = "size", description = "New size (512, 64k, 1m, 1g, 1t)", required = true)
    String size;

    @Override
    protected void run(PrintStream out) throws IOException {
        long bytes = Sizes.requireDeviceSize("size " + size, Sizes.parse("size " + size, size));
        long now = Exports.require(admin).resizeExport(export, bytes);
        out.println("export " + export + ": " + Formats.bytes(now) + " (" + now + " bytes); mapped clients adopt it "
                + "at their next size refresh (size.refresh.ms) or rnbd:resize");
    }
}
