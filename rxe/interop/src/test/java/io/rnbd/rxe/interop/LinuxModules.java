package io.rnbd.rxe.interop;

import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What every test class that drives Linux's RTRS/RNBD modules in the guest needs around it, once:
 * <ul>
 * <li>before the class, the guest and the five modules (and any other kernel module it names),
 *     else the class is skipped with the reason ({@link Guest#require});</li>
 * <li>before each test, its name in the guest's log, so a run's log reads test by test;</li>
 * <li>after each test ({@link #eachTest} only), every rnbd device unmapped, the RTRS/RNBD modules
 *     unloaded and then the block modules the class loads, so the next test starts from none and a
 *     test that failed half-way leaves nothing mapped behind.</li>
 * </ul>
 * A class's own {@code @AfterEach} runs before this one's (JUnit's order), so what it set up
 * itself (an appliance, a dm table, a Ceph cluster) is gone before the modules are unloaded.
 * Register it as {@code @RegisterExtension static final LinuxModules linux = ...}.
 */
final class LinuxModules implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback {
    private final boolean cleanEachTest;
    private final List<String> required;
    private final List<String> unloaded;

    private LinuxModules(boolean cleanEachTest, List<String> required, List<String> unloaded) {
        this.cleanEachTest = cleanEachTest;
        this.required = required;
        this.unloaded = unloaded;
    }

    /** Each test starts from no module loaded and leaves none. */
    static LinuxModules eachTest() {
        return new LinuxModules(true, List.of(), List.of());
    }

    /** The class sets the modules up once and tears them down itself (@BeforeAll/@AfterAll). */
    static LinuxModules perClass() {
        return new LinuxModules(false, List.of(), List.of());
    }

    /** These kernel modules must be installed too (e.g. brd, loop), else the class is skipped. */
    LinuxModules requiring(String... modules) {
        return new LinuxModules(cleanEachTest, concat(required, modules), unloaded);
    }

    /** After each test, these modules are unloaded too, after Linux's RNBD ones (they may hold them). */
    LinuxModules unloading(String... modules) {
        return new LinuxModules(cleanEachTest, required, concat(unloaded, modules));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Guest.requireGuest();
        LinuxRnbd.requireModules();
        for (String m : required) {
            Guest.require(Guest.available(m), "no " + m + " module in this kernel");
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Guest.step("test " + context.getDisplayName());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!cleanEachTest) {
            return;
        }
        LinuxRnbd.unmapAll();
        LinuxRnbd.unloadAll();
        if (!unloaded.isEmpty()) {
            Guest.unload(unloaded.toArray(String[]::new));
        }
    }

    private static List<String> concat(List<String> a, String... b) {
        return java.util.stream.Stream.concat(a.stream(), java.util.Arrays.stream(b)).toList();
    }
}
