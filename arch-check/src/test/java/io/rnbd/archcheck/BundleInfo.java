package io.rnbd.archcheck;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * One built bundle as its metadata shows it: the manifest's packages and {@code osgi.service}
 * capabilities and requirements, its Declarative Services components (OSGI-INF/*.xml), and its
 * class files. Read from a jar or from a {@code target/classes} directory, whichever the
 * reactor puts on the test class path.
 */
record BundleInfo(String bsn, Map<String, String> exports, Set<String> imports, Set<String> packages,
                  List<Component> components, List<Service> provides, List<Need> requires,
                  List<ClassScan> classes) {

    static final String VENDOR = "io.rnbd";
    static final String SERVICE = "osgi.service";

    /** A DS reference. */
    record Ref(String name, String iface, String cardinality, String policy, String option, String target) {
    }

    /** A DS component: what it provides, its properties, its references. */
    record Component(String name, String impl, List<String> services, Map<String, List<String>> properties,
                     List<Ref> refs, String configPolicy, List<String> configPids) {
    }

    /** An {@code osgi.service} capability of the manifest. */
    record Service(List<String> objectClass, Map<String, String> attrs) {
    }

    /** An {@code osgi.service} requirement of the manifest: the interfaces its filter names. */
    record Need(List<String> objectClass, String filter, boolean optional) {
    }

    private static final Pattern OBJECT_CLASS = Pattern.compile("\\(objectClass=([^)]+)\\)");

    /** Every io.rnbd bundle on the class path. */
    static List<BundleInfo> onClassPath() throws Exception {
        List<BundleInfo> out = new ArrayList<>();
        ClassLoader loader = BundleInfo.class.getClassLoader();
        Enumeration<URL> manifests = loader.getResources("META-INF/MANIFEST.MF");
        for (URL url : Collections.list(manifests)) {
            Manifest mf;
            try (InputStream in = url.openStream()) {
                mf = new Manifest(in);
            }
            Attributes main = mf.getMainAttributes();
            if (!VENDOR.equals(main.getValue("Bundle-Vendor")) || main.getValue("Bundle-SymbolicName") == null) {
                continue;
            }
            out.add(read(url, main));
        }
        out.sort((a, b) -> a.bsn.compareTo(b.bsn));
        return out;
    }

    private static BundleInfo read(URL manifestUrl, Attributes main) throws Exception {
        String bsn = Headers.parse(main.getValue("Bundle-SymbolicName")).get(0).names().get(0);
        Map<String, String> exports = new TreeMap<>();
        for (Headers.Clause c : Headers.parse(main.getValue("Export-Package"))) {
            String v = c.attr("version");
            c.names().forEach(p -> exports.put(p, v == null ? "0.0.0" : v));
        }
        Set<String> imports = new TreeSet<>();
        for (Headers.Clause c : Headers.parse(main.getValue("Import-Package"))) {
            imports.addAll(c.names());
        }
        List<Service> provides = new ArrayList<>();
        for (Headers.Clause c : Headers.parse(main.getValue("Provide-Capability"))) {
            if (c.names().contains(SERVICE)) {
                Map<String, String> attrs = new TreeMap<>();
                c.attrs().forEach((k, v) -> {
                    if (!k.equals("objectClass")) {
                        attrs.put(k, String.join(",", v));
                    }
                });
                provides.add(new Service(List.copyOf(c.attrs().getOrDefault("objectClass", List.of())), attrs));
            }
        }
        List<Need> requires = new ArrayList<>();
        for (Headers.Clause c : Headers.parse(main.getValue("Require-Capability"))) {
            if (c.names().contains(SERVICE)) {
                String filter = c.directives().getOrDefault("filter", "");
                List<String> types = new ArrayList<>();
                Matcher m = OBJECT_CLASS.matcher(filter);
                while (m.find()) {
                    types.add(m.group(1));
                }
                requires.add(new Need(types, filter, "optional".equals(c.directives().get("resolution"))));
            }
        }
        String base = manifestUrl.toString();
        base = base.substring(0, base.length() - "META-INF/MANIFEST.MF".length());
        List<Component> components = new ArrayList<>();
        List<ClassScan> classes = new ArrayList<>();
        Set<String> packages = new TreeSet<>();
        try (Root root = Root.of(base)) {
            for (Headers.Clause c : Headers.parse(main.getValue("Service-Component"))) {
                for (String path : c.names()) {
                    components.add(component(root.path.resolve(path)));
                }
            }
            try (Stream<Path> files = Files.walk(root.path)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    String name = root.path.relativize(p).toString();
                    if (name.endsWith(".class") && !name.startsWith("META-INF")) {
                        ClassScan scan = new ClassScan(Files.readAllBytes(p));
                        classes.add(scan);
                        packages.add(scan.packageName());
                    }
                }
            }
        }
        components.sort((a, b) -> a.name.compareTo(b.name));
        return new BundleInfo(bsn, exports, imports, packages, components, provides, requires, classes);
    }

    private static Component component(Path xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        Document doc;
        try (InputStream in = Files.newInputStream(xml)) {
            doc = f.newDocumentBuilder().parse(in);
        }
        Element root = doc.getDocumentElement();
        String impl = first(root, "implementation").getAttribute("class");
        List<String> services = new ArrayList<>();
        NodeList provides = root.getElementsByTagName("provide");
        for (int i = 0; i < provides.getLength(); i++) {
            services.add(((Element) provides.item(i)).getAttribute("interface"));
        }
        Map<String, List<String>> props = new TreeMap<>();
        NodeList properties = root.getElementsByTagName("property");
        for (int i = 0; i < properties.getLength(); i++) {
            Element p = (Element) properties.item(i);
            List<String> values = new ArrayList<>();
            if (p.hasAttribute("value")) {
                values.add(p.getAttribute("value"));
            } else {
                for (String line : p.getTextContent().split("\n")) {
                    if (!line.isBlank()) {
                        values.add(line.strip());
                    }
                }
            }
            props.put(p.getAttribute("name"), values);
        }
        List<Ref> refs = new ArrayList<>();
        NodeList references = root.getElementsByTagName("reference");
        for (int i = 0; i < references.getLength(); i++) {
            Element r = (Element) references.item(i);
            refs.add(new Ref(r.getAttribute("name"), r.getAttribute("interface"),
                    or(r.getAttribute("cardinality"), "1..1"), or(r.getAttribute("policy"), "static"),
                    or(r.getAttribute("policy-option"), "reluctant"), r.getAttribute("target")));
        }
        String pid = root.getAttribute("configuration-pid");
        return new Component(root.getAttribute("name"), impl, services, props, refs,
                or(root.getAttribute("configuration-policy"), "optional"),
                pid.isEmpty() ? List.of(root.getAttribute("name")) : List.of(pid.split(" ")));
    }

    private static Element first(Element root, String tag) {
        return (Element) root.getElementsByTagName(tag).item(0);
    }

    private static String or(String value, String otherwise) {
        return value == null || value.isEmpty() ? otherwise : value;
    }

    /** A jar's or a directory's root, as a path. */
    private record Root(Path path, FileSystem fs) implements AutoCloseable {
        static Root of(String base) throws IOException {
            if (base.startsWith("jar:")) {
                String jar = base.substring("jar:".length(), base.length() - "!/".length());
                FileSystem fs = FileSystems.newFileSystem(Path.of(URI.create(jar)));
                return new Root(fs.getPath("/"), fs);
            }
            return new Root(Path.of(URI.create(base)), null);
        }

        @Override
        public void close() throws IOException {
            if (fs != null) {
                fs.close();
            }
        }
    }

    /** The interfaces DS components of this bundle provide, each component's set as one list. */
    List<List<String>> dsServiceSets() {
        List<List<String>> out = new ArrayList<>();
        for (Component c : components) {
            if (!c.services.isEmpty()) {
                out.add(c.services);
            }
        }
        return out;
    }
}
