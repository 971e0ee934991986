package io.rnbd.archcheck;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The api/internal convention of docs/architecture.md ("api and internal"), over the manifests:
 * <ul>
 *   <li>a <em>library</em> (no DS component, no shell command: {@code common}, the {@code *-api}
 *       and {@code *-proto} bundles, {@code nbd-transport}, {@code nbd-client}, {@code loadgen},
 *       {@code command-support}) exports its root package and has no other;</li>
 *   <li>an <em>implementation</em> (DS components) exports at most {@code <root>.api}, and keeps
 *       everything else under {@code <root>.internal};</li>
 *   <li>a <em>command</em> bundle ({@code Karaf-Commands}) exports nothing and keeps its actions
 *       in {@code <root>} and {@code <root>.completers}, as Karaf's own command bundles;</li>
 *   <li>every exported package has a version ({@code @Version} in its package-info.java).</li>
 * </ul>
 * Root package: {@code io.rnbd.} and the bundle's name with dots for dashes, but where
 * {@link #ROOTS} says otherwise.
 */
final class Convention {
    /** Roots that are not the name with dots for dashes (STYLE.md: the policy's name is one word). */
    static final Map<String, String> ROOTS = Map.of(
            "rtrs-mp-min-inflight", "io.rnbd.rtrs.mp.mininflight",
            "rtrs-mp-min-latency", "io.rnbd.rtrs.mp.minlatency",
            "rtrs-mp-round-robin", "io.rnbd.rtrs.mp.roundrobin",
            "com.ibm.disni", "com.ibm.disni");

    /** Packages against the rule, each with the reason it stays. */
    static final Map<String, String> EXCEPTIONS = Map.ofEntries(
            Map.entry("com.ibm.disni: *", "DiSNI 2.1 re-bundled as it is: a third party's packages"),
            Map.entry("rtrs-core: io.rnbd.rtrs.core", "a library packed into rtrs-client and rtrs-server at build "
                    + "time (bnd -conditionalpackage) and never installed, so that the two sides swap independently: "
                    + "it exports nothing"),
            Map.entry("rtrs-client: io.rnbd.rtrs.core", "rtrs-core, packed at build time (rtrs-core's README)"),
            Map.entry("rtrs-server: io.rnbd.rtrs.core", "rtrs-core, packed at build time (rtrs-core's README)"),
            Map.entry("rtrs-client: io.rnbd.rtrs.mp.roundrobin.internal", "the round-robin policy packed as the "
                    + "built-in floor (rtrs-client's README, \"Multipath policy\")"));

    private Convention() {
    }

    static String root(String bsn) {
        return ROOTS.getOrDefault(bsn, "io.rnbd." + bsn.replace('-', '.'));
    }

    static List<String> violations(List<BundleInfo> bundles) {
        List<String> out = new ArrayList<>();
        for (BundleInfo b : bundles) {
            if (EXCEPTIONS.containsKey(b.bsn() + ": *")) {
                continue;
            }
            String root = root(b.bsn());
            boolean command = b.classes().stream().anyMatch(c -> c.annotations.contains(
                    "org.apache.karaf.shell.api.action.lifecycle.Service"));
            boolean implementation = !b.components().isEmpty();
            b.exports().forEach((p, v) -> {
                if (v.equals("0.0.0")) {
                    out.add(b.bsn() + " exports " + p + " without a version (@Version in its package-info.java)");
                }
            });
            for (String p : b.packages()) {
                String key = b.bsn() + ": " + p;
                if (EXCEPTIONS.containsKey(key)) {
                    continue;
                }
                boolean exported = b.exports().containsKey(p);
                if (command) {
                    if (exported) {
                        out.add(key + " is exported: a command bundle exports nothing");
                    } else if (!p.equals(root) && !p.equals(root + ".completers")) {
                        out.add(key + ": a command bundle's packages are " + root + " and " + root + ".completers");
                    }
                } else if (implementation) {
                    if (p.equals(root + ".api")) {
                        if (!exported) {
                            out.add(key + " is an api package that is not exported");
                        }
                    } else if (exported) {
                        out.add(key + " is exported: an implementation bundle exports only " + root + ".api");
                    } else if (!p.equals(root + ".internal") && !p.startsWith(root + ".internal.")) {
                        out.add(key + ": an implementation bundle keeps what it does not export under "
                                + root + ".internal");
                    }
                } else if (!p.equals(root)) {
                    out.add(key + ": a library (no component, no command) has its root package " + root + " alone");
                } else if (!exported) {
                    out.add(key + ": a library exports its root package");
                }
            }
        }
        return out;
    }
}
