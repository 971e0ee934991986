package io.rnbd.rnbd.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.junit.jupiter.api.Test;

/**
 * What Karaf's command extender finds in the bundle: every verb of the scope once, and only
 * optional service references, so one missing admin service (a client-only or server-only
 * appliance) hides no command: each says what is missing instead.
 */
class CommandScanTest {
    @Test
    void everyVerbIsAServiceAndEveryAdminReferenceIsOptional() throws Exception {
        Path root = Path.of(ExportsCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String cn = root.relativize(p).toString().replace(".class", "").replace('/', '.');
                Class<?> c = Class.forName(cn, false, getClass().getClassLoader());
                if (c.getAnnotation(Service.class) == null) {
                    continue;
                }
                Command cmd = c.getAnnotation(Command.class);
                if (cmd != null) {
                    assertEquals("rnbd", cmd.scope());
                    assertTrue(names.add(cmd.name()), cmd.name());
                }
                for (Class<?> k = c; k != Object.class; k = k.getSuperclass()) {
                    for (Field f : k.getDeclaredFields()) {
                        Reference r = f.getAnnotation(Reference.class);
                        if (r != null && !f.getType().getName().startsWith("org.osgi.framework.")) {
                            assertTrue(r.optional(), c.getSimpleName() + "." + f.getName() + " must be optional");
                        }
                    }
                }
            }
        }
        assertTrue(names.containsAll(Set.of("exports", "export-add", "export-remove", "export-resize", "map", "unmap", "devices",
                "resize", "remap", "force-close", "bench", "backends")), names.toString());
    }
}
