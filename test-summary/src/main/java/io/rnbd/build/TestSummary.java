package io.rnbd.build;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * What the build's tests did, printed as the build's last lines: counts, and every skipped test
 * with its reason. Surefire's console says only "Skipped: 3" per class; the reasons (a missing
 * tool, no RDMA device, not root) were in the XML reports alone. Reads every
 * {@code target/surefire-reports/TEST-*.xml} and {@code target/failsafe-reports/TEST-*.xml}
 * under the checkout written since {@code since} (the build's start: older reports are from
 * modules this build did not test).
 */
public final class TestSummary {
    /** One skipped test's module, class and reason; tests of one class with one reason are counted together. */
    record Skip(String module, String testClass, String reason) {
    }

    private int run;
    private int failed;
    private final Map<Skip, Integer> skipped = new TreeMap<>((a, b) -> {
        int c = a.module.compareTo(b.module);
        c = c != 0 ? c : a.testClass.compareTo(b.testClass);
        return c != 0 ? c : a.reason.compareTo(b.reason);
    });

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        long since = ManagementFactory.getRuntimeMXBean().getStartTime();
        TestSummary summary = new TestSummary();
        for (Path report : reports(root, since)) {
            summary.read(root, report);
        }
        summary.print(System.out);
    }

    /** The report files under {@code root} modified since {@code sinceMillis}. */
    static List<Path> reports(Path root, long sinceMillis) throws IOException {
        List<Path> found = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                // not into Karaf distributions, instances, Pax Exam's unpacked containers, git
                if (name.equals(".git") || name.equals("exam") || name.equals("assembly") || name.endsWith("-it")
                        || name.equals("node_modules")) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                String name = file.getFileName().toString();
                String dir = file.getParent().getFileName().toString();
                if (name.startsWith("TEST-") && name.endsWith(".xml")
                        && (dir.equals("surefire-reports") || dir.equals("failsafe-reports"))
                        && attrs.lastModifiedTime().toMillis() >= sinceMillis) {
                    found.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        found.sort(null);
        return found;
    }

    void read(Path root, Path report) throws Exception {
        // <module>/target/surefire-reports/TEST-x.xml
        Path module = root.relativize(report.getParent().getParent().getParent());
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        DocumentBuilder b = f.newDocumentBuilder();
        Document doc = b.parse(report.toFile());
        NodeList cases = doc.getElementsByTagName("testcase");
        for (int i = 0; i < cases.getLength(); i++) {
            Element c = (Element) cases.item(i);
            run++;
            if (c.getElementsByTagName("failure").getLength() > 0 || c.getElementsByTagName("error").getLength() > 0) {
                failed++;
            }
            NodeList s = c.getElementsByTagName("skipped");
            if (s.getLength() > 0) {
                String cls = c.getAttribute("classname");
                cls = cls.substring(cls.lastIndexOf('.') + 1);
                skipped.merge(new Skip(module.toString(), cls, reason((Element) s.item(0))), 1, Integer::sum);
            }
        }
    }

    /** The reason of a skip: its message, or the first line of what it holds, without JUnit's prefixes. */
    static String reason(Element skipped) {
        String r = skipped.getAttribute("message");
        if (r.isBlank()) {
            r = skipped.getTextContent().strip();
            int nl = r.indexOf('\n');
            r = nl < 0 ? r : r.substring(0, nl).strip();
        }
        for (String prefix : new String[] {"org.opentest4j.TestAbortedException: ", "org.junit.AssumptionViolatedException: ",
                "Assumption failed: "}) {
            if (r.startsWith(prefix)) {
                r = r.substring(prefix.length()).strip();
            }
        }
        return r.isBlank() ? "(the test gave no reason)" : r;
    }

    void print(PrintStream out) {
        int skips = skipped.values().stream().mapToInt(Integer::intValue).sum();
        out.println("Tests of this build: " + run + " run, " + (run - skips - failed) + " passed, " + skips
                + " skipped, " + failed + " failed");
        if (skips == 0) {
            return;
        }
        out.println("Skipped, with their reasons:");
        for (Map.Entry<Skip, Integer> e : skipped.entrySet()) {
            Skip k = e.getKey();
            out.println("  " + k.module + " " + k.testClass + (e.getValue() > 1 ? " (" + e.getValue() + " tests)" : "")
                    + ": " + k.reason);
        }
    }
}
