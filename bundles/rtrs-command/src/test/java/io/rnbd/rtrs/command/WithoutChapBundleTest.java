package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.command.support.ConsoleCommand;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.junit.jupiter.api.Test;

/**
 * The bundle imports the chap API optionally. This loads the bundle's classes the way Karaf's
 * command extender does (every class, then the fields of each {@code @Service} class and its
 * superclasses) with the chap API missing, as in a bundle whose optional import is unwired.
 */
class WithoutChapBundleTest {
    private static final Set<String> COMMANDS = Set.of("sessions", "paths", "path-add", "path-remove",
            "path-reconnect", "path-disconnect", "mp-policy", "max-reconnect-attempts", "stats", "server-sessions",
            "server-session-close", "auth-keys", "auth-key-add", "auth-key-remove");

    /** Defines this bundle's classes itself and has no chap API to give them. */
    private static URLClassLoader withoutChap() throws Exception {
        URL classes = SessionsCommand.class.getProtectionDomain().getCodeSource().getLocation();
        ClassLoader parent = new ClassLoader(WithoutChapBundleTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("io.rnbd.rtrs.auth.chap.") || name.startsWith("io.rnbd.rtrs.command.")) {
                    throw new ClassNotFoundException(name);
                }
                return super.loadClass(name, resolve);
            }
        };
        return new URLClassLoader(new URL[] {classes}, parent);
    }

    private static List<String> classNames() throws Exception {
        Path root = Path.of(SessionsCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".class"))
                    .map(p -> root.relativize(p).toString().replace(".class", "").replace('/', '.').replace('\\', '.'))
                    .sorted().toList();
        }
    }

    @Test
    void everyCommandRegistersAndTheKeyCommandsSayTheBundleIsMissing() throws Exception {
        Set<String> commands = new TreeSet<>();
        try (URLClassLoader loader = withoutChap()) {
            for (String name : classNames()) {
                Class<?> c = loader.loadClass(name);
                if (c.getAnnotation(Service.class) == null) {
                    continue;
                }
                for (Class<?> k = c; k != Object.class; k = k.getSuperclass()) {
                    for (Field f : k.getDeclaredFields()) {
                        f.getAnnotation(Reference.class);
                    }
                }
                Command cmd = c.getAnnotation(Command.class);
                if (cmd != null) {
                    commands.add(cmd.name());
                }
            }
            assertEquals(COMMANDS, commands);

            assertEquals("Error: the chap authentication bundle is not installed\n",
                    runKeys(loader, new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, null)));
            // the chap bundle came after this one: a service is there, its package is not wired here
            FakeContext late = new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, new Object());
            assertEquals("Error: the chap authentication bundle was installed after rtrs-command; "
                    + "run bundle:refresh rtrs-command\n", runKeys(loader, late));
            assertEquals(1, late.ungets.get());
        }
    }

    /** Runs rtrs:auth-keys as loaded by {@code loader}. */
    private static String runKeys(ClassLoader loader, FakeContext ctx) throws Exception {
        Class<?> keys = loader.loadClass(AuthKeysCommand.class.getName());
        assertEquals(loader, keys.getClassLoader());
        Object command = keys.getDeclaredConstructor().newInstance();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        // ConsoleCommand lives in command-support, so the class path's copy is this one's base
        ((ConsoleCommand) command).setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        Field context = keys.getDeclaredField("bundleContext");
        context.setAccessible(true);
        context.set(command, ctx.context);
        keys.getMethod("execute").invoke(command);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theBridgeIsTheOnlyClassNeedingTheChapApi() throws Exception {
        try (URLClassLoader loader = withoutChap()) {
            for (String name : classNames()) {
                Class<?> c = loader.loadClass(name);
                if (name.contains(".internal.chap.")) {
                    // proves the chap API really is missing here, so the test above can fail
                    assertThrows(NoClassDefFoundError.class, c::getDeclaredConstructors);
                } else {
                    c.getDeclaredFields();
                    c.getDeclaredMethods();
                    c.getDeclaredConstructors();
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
