package io.rnbd.rtrs.auth.chap.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.command.completers.HostIdCompleter;
import java.lang.reflect.Field;
import java.util.List;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.junit.jupiter.api.Test;

/**
 * What Karaf's command extender reads: the documented names in the rtrs scope, and the key
 * admin referenced optionally, so that while the chap bundle is stopped the commands stay and
 * say so rather than vanishing.
 */
class CommandsTest {
    @Test
    void theKeyCommandsAreInTheRtrsScopeAndReferenceTheKeyAdminOptionally() throws Exception {
        List<Class<?>> commands = List.of(AuthKeysCommand.class, AuthKeyAddCommand.class, AuthKeyRemoveCommand.class);
        assertEquals(List.of("rtrs:auth-keys", "rtrs:auth-key-add", "rtrs:auth-key-remove"), commands.stream()
                .map(c -> c.getAnnotation(Command.class)).map(c -> c.scope() + ":" + c.name()).toList());
        for (Class<?> c : List.of(AuthKeysCommand.class, AuthKeyAddCommand.class, AuthKeyRemoveCommand.class,
                HostIdCompleter.class)) {
            assertNotNull(c.getAnnotation(Service.class), c.getName());
            Field admin = c.getDeclaredField("admin");
            assertEquals(ChapKeyAdmin.class, admin.getType(), c.getName());
            assertTrue(admin.getAnnotation(Reference.class).optional(), c.getName());
        }
    }
}
