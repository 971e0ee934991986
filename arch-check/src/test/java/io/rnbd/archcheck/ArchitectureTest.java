package io.rnbd.archcheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The architecture as the built bundles declare it, checked against what docs/architecture.md
 * and the house rules say: the service table (generated here, compared with the document's),
 * every service registered or looked up outside DS declared in the manifest, the import graph
 * (no cycle, nothing pointing up), and the api/internal convention. Reads metadata only: the
 * bundles' MANIFEST.MF, OSGI-INF/*.xml and class files, a few seconds for all of them.
 */
class ArchitectureTest {
    static final String REGENERATE = "mvn -B -o -q install -DskipTests -pl arch-check -am"
            + " && mvn -B -o test -pl arch-check -Darch.write=true";

    private static List<BundleInfo> bundles;
    private static Map<String, BundleInfo> byName;

    @BeforeAll
    static void read() throws Exception {
        bundles = BundleInfo.onClassPath();
        byName = new LinkedHashMap<>();
        bundles.forEach(b -> byName.put(b.bsn(), b));
    }

    /** So that no check passes on an empty class path: every module of bundles/ but testkit is read. */
    @Test
    void everyBundleOfTheReactorIsRead() throws Exception {
        String pom = Files.readString(doc().getParent().resolve("../bundles/pom.xml").normalize());
        Set<String> modules = new TreeSet<>();
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        while (m.find()) {
            modules.add(m.group(1).equals("disni") ? "com.ibm.disni" : m.group(1));
        }
        modules.remove("testkit");
        assertEquals(modules, new TreeSet<>(byName.keySet()),
                "arch-check/pom.xml must depend on every bundle of bundles/pom.xml but testkit");
    }

    @Test
    void theServiceTableOfArchitectureMdIsTheBuiltBundles() throws Exception {
        Path doc = doc();
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        String section = ServiceTable.section(text);
        assertNotNull(section, doc + " has no '" + ServiceTable.BEGIN + "' ... '" + ServiceTable.END + "' section");
        String table = ServiceTable.render(bundles);
        if (Boolean.getBoolean("arch.write")) {
            Files.writeString(doc, ServiceTable.replaceSection(text, table), StandardCharsets.UTF_8);
            return;
        }
        if (!table.equals(section)) {
            fail("docs/architecture.md's service table is not what the built bundles declare ("
                    + ServiceTable.firstDifference(table, section) + ")\nRegenerate it: " + REGENERATE);
        }
    }

    /** A service registered through the BundleContext is declared with @Capability where it is registered. */
    @Test
    void everyServiceRegisteredByHandIsDeclared() {
        List<String> undeclared = new ArrayList<>();
        for (BundleInfo b : bundles) {
            Map<String, ClassScan> classes = classes(b);
            for (ClassScan c : b.classes()) {
                if (c.calls("org.osgi.framework.BundleContext", "registerService")
                        && !annotated(classes, c, "org.osgi.annotation.bundle.Capability",
                        "org.osgi.annotation.bundle.Capabilities")) {
                    undeclared.add(b.bsn() + ": " + c.name);
                }
            }
        }
        assertTrue(undeclared.isEmpty(), "these classes register services by hand without an "
                + "@Capability(namespace = \"osgi.service\", attribute = \"objectClass:List<String>=...\") on their "
                + "class, so no manifest says what they provide: " + undeclared);
    }

    /** A service looked up outside DS (a BundleContext lookup, a ServiceTracker) is declared with @Requirement. */
    @Test
    void everyServiceLookedUpOutsideDsIsDeclared() {
        List<String> undeclared = new ArrayList<>();
        for (BundleInfo b : bundles) {
            Map<String, ClassScan> classes = classes(b);
            for (ClassScan c : b.classes()) {
                boolean looksUp = c.calls("org.osgi.framework.BundleContext", "getServiceReference")
                        || c.calls("org.osgi.framework.BundleContext", "getServiceReferences")
                        || c.calls("org.osgi.framework.BundleContext", "getAllServiceReferences")
                        || c.classRefs.contains("org.osgi.util.tracker.ServiceTracker");
                if (looksUp && !annotated(classes, c, "org.osgi.annotation.bundle.Requirement",
                        "org.osgi.annotation.bundle.Requirements")) {
                    undeclared.add(b.bsn() + ": " + c.name);
                }
            }
        }
        assertTrue(undeclared.isEmpty(), "these classes look services up outside DS without an "
                + "@Requirement(namespace = \"osgi.service\", filter = \"(objectClass=...)\") on their class or "
                + "package, so no manifest says what they consume: " + undeclared);
    }

    /** What Karaf's shell injects into a command (its own @Reference, not DS) is in the bundle's requirements. */
    @Test
    void everyServiceACommandUsesIsDeclared() {
        Set<String> injectedByTheShell = Set.of("org.osgi.framework.BundleContext",
                "org.apache.karaf.shell.api.console.Session", "org.apache.karaf.shell.api.console.Terminal",
                "org.apache.karaf.shell.api.console.Registry", "org.apache.karaf.shell.api.console.SessionFactory");
        List<String> undeclared = new ArrayList<>();
        for (BundleInfo b : bundles) {
            Set<String> required = new TreeSet<>();
            b.requires().forEach(n -> required.addAll(n.objectClass()));
            for (ClassScan c : b.classes()) {
                for (ClassScan.Field f : c.fields) {
                    if (f.annotations().contains("org.apache.karaf.shell.api.action.lifecycle.Reference")
                            && !injectedByTheShell.contains(f.type()) && !required.contains(f.type())) {
                        undeclared.add(b.bsn() + ": " + c.name + "." + f.name() + " (" + f.type() + ")");
                    }
                }
            }
        }
        assertTrue(undeclared.isEmpty(), "these shell @Reference fields name services their bundle does not "
                + "declare (an optional @Requirement in the command package's package-info.java): " + undeclared);
    }

    /** Bundle A imports a package bundle B exports: A points at B. */
    static Map<String, Set<String>> importGraph(List<BundleInfo> all) {
        Map<String, String> exporter = new HashMap<>();
        for (BundleInfo b : all) {
            b.exports().keySet().forEach(p -> exporter.put(p, b.bsn()));
        }
        Map<String, Set<String>> graph = new TreeMap<>();
        for (BundleInfo b : all) {
            Set<String> to = new TreeSet<>();
            for (String p : b.imports()) {
                String e = exporter.get(p);
                if (e != null && !e.equals(b.bsn())) {
                    to.add(e);
                }
            }
            graph.put(b.bsn(), to);
        }
        return graph;
    }

    @Test
    void noImportPointsUp() {
        List<String> up = upwardImports(importGraph(bundles));
        assertTrue(up.isEmpty(), "imports pointing up the layers (common <- verbs <- transport <- block <- "
                + "gateway/console/observability, docs/architecture.md): " + up);
    }

    static List<String> upwardImports(Map<String, Set<String>> graph) {
        List<String> up = new ArrayList<>();
        graph.forEach((from, tos) -> {
            for (String to : tos) {
                Layers.Layer a = Layers.of(from);
                Layers.Layer b = Layers.of(to);
                if (b.rank() > a.rank()) {
                    up.add(from + " (" + a.name() + ") -> " + to + " (" + b.name() + ")");
                }
            }
        });
        return up;
    }

    @Test
    void noImportCycle() {
        List<String> cycle = cycle(importGraph(bundles));
        assertTrue(cycle.isEmpty(), "package imports form a cycle: " + String.join(" -> ", cycle));
    }

    /** A cycle of the graph (its bundles, the first repeated at the end), or an empty list. */
    static List<String> cycle(Map<String, Set<String>> graph) {
        Map<String, Integer> state = new HashMap<>();
        for (String start : graph.keySet()) {
            List<String> path = new ArrayList<>();
            if (visit(start, graph, state, path)) {
                return path;
            }
        }
        return List.of();
    }

    private static boolean visit(String node, Map<String, Set<String>> graph, Map<String, Integer> state,
                                 List<String> path) {
        Integer s = state.get(node);
        if (s != null && s == 2) {
            return false;
        }
        if (s != null && s == 1) {
            List<String> loop = new ArrayList<>(path.subList(path.indexOf(node), path.size()));
            loop.add(node);
            path.clear();
            path.addAll(loop);
            return true;
        }
        state.put(node, 1);
        path.add(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            if (visit(next, graph, state, path)) {
                return true;
            }
        }
        path.remove(path.size() - 1);
        state.put(node, 2);
        return false;
    }

    /** docs/architecture.md, "api and internal", over every manifest; the exceptions say why. */
    @Test
    void packagesFollowTheApiInternalConvention() {
        List<String> wrong = Convention.violations(bundles);
        assertTrue(wrong.isEmpty(), "packages against the api/internal convention (docs/architecture.md, "
                + "\"api and internal\"):\n  " + String.join("\n  ", wrong));
    }

    private static Map<String, ClassScan> classes(BundleInfo b) {
        Map<String, ClassScan> out = new HashMap<>();
        b.classes().forEach(c -> out.put(c.name, c));
        return out;
    }

    /** The class, its outermost class or its package carries one of the annotations. */
    private static boolean annotated(Map<String, ClassScan> classes, ClassScan c, String... types) {
        for (ClassScan holder : new ClassScan[] {c, classes.get(c.outermost()),
                classes.get(c.packageName() + ".package-info")}) {
            if (holder != null) {
                for (String t : types) {
                    if (holder.annotations.contains(t)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    static Path doc() {
        String path = System.getProperty("arch.doc");
        assertNotNull(path, "system property arch.doc (set by arch-check/pom.xml) names docs/architecture.md");
        return Path.of(path).normalize();
    }
}
